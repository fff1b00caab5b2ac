// Small pieces of cli/ behind issue 11 item 6 and 9: the progress line's estimate, the memory
// estimate's arithmetic, the output-is-an-input check. (The commands themselves: check_hostile_cli.py.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "cli/distinct_paths.h"
#include "cli/memory_budget.h"
#include "cli/progress_printer.h"

namespace mlacheck::cli {
namespace {

TEST(CliProgressLine, NoEstimateFromTheFirstPercents) {
  // Before: "0.0 % (1 s elapsed, ~43385 s left)" for a case done 1.2 s later.
  EXPECT_EQ(progress_line("generate x", 1, 43386, 1.0), "  generate x:   0.0 % (1 s elapsed)");
  EXPECT_EQ(progress_line("generate x", 4, 100, 2.0), "  generate x:   4.0 % (2 s elapsed)");
  EXPECT_EQ(progress_line("generate x", 25, 100, 1.0), "  generate x:  25.0 % (1 s elapsed, ~3 s left)");
}

TEST(CliMemoryBudget, EstimatesSaturateInsteadOfWrapping) {
  const uint64_t small = golden_case_bytes({64, 64 * 8192, 64, 0}, 7);
  EXPECT_GT(small, 64ull * 8192 * 2034) << "at least the four caches";
  EXPECT_LT(small, 64ull * 8192 * 2034 + (400ull << 20));
  // 2^31 requests of 2^31 keys: far more than 2^64 bytes must not come out as a small number.
  EXPECT_EQ(golden_case_bytes({INT64_MAX / 2, INT64_MAX / 2, INT32_MAX, 0}, 7), UINT64_MAX);
  EXPECT_LT(judging_bytes({64, 64 * 8192, 64, 0}, true, false), small) << "compare reads one cache";
  // ref on inputs alone and gen hold no quantized cache (issue 11 item 6): the bf16 cache (1152
  // bytes a row), q and the outputs; an input file's own FP8 cache adds its 576 bytes a row.
  const uint64_t derived = golden_case_bytes({64, 64 * 8192, 64, 0}, 7, kOnlyDerivedCaches);
  EXPECT_GT(derived, 64ull * 8192 * 1152);
  EXPECT_LT(derived, 64ull * 8192 * 1152 + (300ull << 20));
  EXPECT_EQ(golden_case_bytes({64, 64 * 8192, 64, 0}, 7, {.fp8 = true, .mxfp4 = false}) - derived, 64ull * 8192 * 576);
}

TEST(CliMemoryBudget, RefusesWithTheNumbers) {
  ::setenv("MLACHECK_MEMORY_AVAILABLE", "2000000000", 1);
  EXPECT_EQ(available_memory_bytes(), 2000000000u);
  EXPECT_NO_THROW(require_memory(1999999999, "x"));
  try {
    require_memory(31'200'000'000, "ref big.safetensors");
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ref big.safetensors needs 31.2 GB of memory, 2.0 GB available"),
              std::string::npos)
        << e.what();
  }
  ::unsetenv("MLACHECK_MEMORY_AVAILABLE");
  EXPECT_GT(available_memory_bytes(), 0u) << "measured from /proc/meminfo and the cgroup";
}

TEST(CliDistinctPaths, AnOutputThatIsAnInputIsRefused) {
  const auto dir = std::filesystem::temp_directory_path() / ("mlacheck_distinct_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string g = (dir / "g.safetensors").string();
  std::ofstream(g) << "x";
  std::filesystem::create_symlink(g, dir / "link");
  EXPECT_THROW(require_distinct({{"--json", g}}, {{"GOLDEN", g}}), std::invalid_argument);
  EXPECT_THROW(require_distinct({{"--json", (dir / "." / "g.safetensors").string()}}, {{"GOLDEN", g}}),
               std::invalid_argument);
  EXPECT_THROW(require_distinct({{"--json", (dir / "link").string()}}, {{"GOLDEN", g}}), std::invalid_argument);
  EXPECT_THROW(require_distinct({{"--json", (dir / "r").string()}, {"--junit", (dir / "r").string()}}, {}),
               std::invalid_argument);
  EXPECT_NO_THROW(require_distinct({{"--json", (dir / "r.json").string()}, {"--maps", ""}}, {{"GOLDEN", g}}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlacheck::cli
