#include "tests/support/test_data.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace mlacheck::testing {

std::filesystem::path data_dir() {
  std::filesystem::path dir = MLACHECK_SOURCE_DATA_DIR;
  if (const char* env = std::getenv("MLACHECK_DATA_DIR"); env != nullptr && *env != '\0') dir = env;
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error("test data folder '" + dir.string() +
                             "' does not exist; set MLACHECK_DATA_DIR to the repository's data/");
  return dir;
}

std::filesystem::path quant_oracle_path() {
  return data_dir() / "oracles" / "mla_quant_oracle_v1.safetensors";
}

}  // namespace mlacheck::testing
