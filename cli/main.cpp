// mlacheck: reference, golden-file generator, GPU kernel suite and test suite for MLA decode.
#include <cstdio>
#include <exception>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/version.h"
#include "gpu/assigned_gpu.h"
#include "io/printable.h"

int main(int argc, char** argv) {
  using namespace mlacheck::cli;
  CLI::App app{"mlacheck: CPU reference, golden files, GPU kernels and tests for MLA decode attention"};
  app.set_version_flag("--version", std::string(version_string()));
  app.require_subcommand(1);

  Runner run;
  add_compare_command(app, run);
  add_identify_command(app, run);
  add_drift_command(app, run);
  add_list_command(app, run);
  add_quant_command(app, run);
  add_gen_command(app, run);
  add_ref_command(app, run);
  add_power_command(app, run);
  add_verify_command(app, run);
  add_bench_command(app, run);
  add_selftest_command(app, run, argv[0]);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here too, with exit code 0.
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    // Before any command can start the GPU runtime, which reads the visible-devices variable once.
    mlacheck::gpu::use_assigned_gpu();
    return run ? run() : kExitUsage;
  } catch (const std::bad_alloc&) {
    // The estimates (cli/memory_budget.h) should refuse a case that cannot fit before this.
    std::fflush(stdout);
    fmt::print(stderr, "mlacheck: error: out of memory (std::bad_alloc) although the estimate before "
                       "reading allowed it; set MLACHECK_MEMORY_AVAILABLE lower or free memory\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    // Any message may quote a hostile file: escaped and capped here too (io/printable.h).
    fmt::print(stderr, "mlacheck: error: {}\n",
               mlacheck::io::printable(e.what(), {.max_chars = mlacheck::io::kMaxMessageChars,
                                                  .keep_newlines = true}));
    return kExitUsage;
  }
}
