#include "cli/json_report.h"

#include <fstream>
#include <stdexcept>

namespace mlacheck::cli {

void write_json_report(const std::string& path, const nlohmann::json& report) {
  std::ofstream f(path);
  f << report.dump(2) << '\n';
  if (!f) throw std::runtime_error(path + ": cannot write the JSON report");
}

}  // namespace mlacheck::cli
