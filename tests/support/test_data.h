#pragma once
// Locating the committed test data (data/ at the top of the repository) from inside a test.
#include <filesystem>

namespace mlacheck::testing {

// data/ of the source tree: $MLACHECK_DATA_DIR if set, else the path compiled into the build.
// Fails the calling test (via an exception) when the folder does not exist: the data is committed,
// so a missing folder is a broken checkout, not a reason to skip.
std::filesystem::path data_dir();

// data/oracles/mla_quant_oracle_v1.safetensors (a copy of shared/oracles, see its README).
std::filesystem::path quant_oracle_path();

}  // namespace mlacheck::testing
