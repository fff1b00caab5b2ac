#pragma once
// Each subcommand lives in its own file and registers itself here. A command that is selected on
// the command line stores its runner in `run`; main calls it after parsing and turns its result
// (and any exception) into the exit code, so no library code ever exits.
#include <functional>

#include <CLI/CLI.hpp>

namespace mlacheck::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;   // the check ran and found a failure
inline constexpr int kExitUsage = 2;  // bad arguments or unreadable / invalid input

using Runner = std::function<int()>;

void add_compare_command(CLI::App& app, Runner& run);
void add_identify_command(CLI::App& app, Runner& run);
void add_drift_command(CLI::App& app, Runner& run);
void add_list_command(CLI::App& app, Runner& run);
void add_quant_command(CLI::App& app, Runner& run);
void add_gen_command(CLI::App& app, Runner& run);
void add_ref_command(CLI::App& app, Runner& run);
void add_power_command(CLI::App& app, Runner& run);
void add_verify_command(CLI::App& app, Runner& run);
void add_bench_command(CLI::App& app, Runner& run);
void add_selftest_command(CLI::App& app, Runner& run, const char* argv0);

}  // namespace mlacheck::cli
