#include "cli/json_report.h"

#include "io/atomic_file.h"

namespace mlacheck::cli {

// Through the one atomic writer: a report is whole or absent, and a failed write is an error.
void write_json_report(const std::string& path, const nlohmann::json& report) {
  io::write_file_atomically(path, report.dump(2) + '\n');
}

}  // namespace mlacheck::cli
