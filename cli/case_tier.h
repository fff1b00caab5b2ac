#pragma once
// Case tiers (issue 12): the case lists the GPU commands run, as files in data/cases/ — like
// oneDNN's benchdnn inputs (smoke / ci / full), each mapped to a CTest label (tier-quick,
// tier-standard, tier-full; tests/tiers/CMakeLists.txt).
//   quick     seconds: one small case per kind of trouble (the GPU decode tests' cases)
//   standard  what serving sends: harness shapes, ragged, paged, q_len 2/4, profiles (`verify`'s
//             default: every planted bug of issue 12 fails on it)
//   full      standard plus larger and rarer cases, for nightly runs
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace mlacheck::cli {

enum class CaseTier { quick, standard, full };

std::string_view tier_name(CaseTier tier);

// The tier's case list: $MLACHECK_DATA_DIR/cases/<tier>.txt when the variable is set, else
// data/cases/<tier>.txt relative to the working directory (the repository root).
std::string tier_case_list(CaseTier tier);

// A file of data/cases/ located the same way (e.g. "default.txt", the 8 harness shapes).
std::string data_case_list(std::string_view file_name);

// Adds `--tier quick|standard|full` to `command` (an unknown name is a usage error listing the
// three); returns the option so the caller can make it exclude --case-list.
CLI::Option* add_tier_option(CLI::App& command, CaseTier& tier, std::string_view what_default);

}  // namespace mlacheck::cli
