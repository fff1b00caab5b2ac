// `mlacheck selftest [gtest flags]`: the GoogleTest suite linked into this binary. CTest runs the
// same tests through the same binary (tests/CMakeLists.txt), so there is one suite, not two.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/commands.h"

namespace mlacheck::cli {

void add_selftest_command(CLI::App& app, Runner& run, const char* argv0) {
  CLI::App* sub = app.add_subcommand(
      "selftest", "Run the built-in GoogleTest suite; further arguments go to GoogleTest "
                  "(e.g. --gtest_filter=Fp8*, --gtest_list_tests)");
  // Everything after `selftest` belongs to GoogleTest, including its --gtest_* flags.
  sub->prefix_command();
  sub->callback([&run, sub, argv0] {
    std::vector<std::string> args{argv0};
    for (const std::string& a : sub->remaining()) args.push_back(a);
    run = [args]() mutable {
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      int argc = static_cast<int>(args.size());
      ::testing::InitGoogleTest(&argc, argv.data());
      return RUN_ALL_TESTS() == 0 ? kExitOk : kExitFail;
    };
  });
}

}  // namespace mlacheck::cli
