// `mlacheck list`: the formats `quant` writes and the recipes the reference and kernels implement.
#include <string>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/quant_formats.h"
#include "gpu/availability.h"
#include "gpu/fast/tunables.h"
#include "gpu/family.h"
#include "gpu/registry.h"
#include "problem/recipe.h"

namespace mlacheck::cli {
namespace {

int run_list() {
  fmt::print("formats (mlacheck quant --format):\n");
  for (const QuantFormat& f : quant_formats())
    fmt::print("  {:<22} {}\n", f.name, f.description);

  fmt::print("\nrecipes:\n");
  fmt::print("  {:<12} {:<14} {:<6} {:<5} {:<5} {}\n", "name", "Q", "KV", "P", "exp", "source");
  for (const problem::Recipe& r : problem::recipes())
    fmt::print("  {:<12} {:<14} {:<6} {:<5} {:<5} {}\n", r.name, problem::to_string(r.q),
               problem::to_string(r.kv), problem::to_string(r.p), problem::to_string(r.base),
               r.source);

  fmt::print("\nrecipe fields (--recipe PRESET:FIELD=VALUE,... or --FIELD VALUE on compare, "
             "identify, drift):\n");
  for (const problem::RecipeField& f : problem::recipe_fields())
    fmt::print("  {:<9} {:<58} {}\n", f.name, f.values, f.what);
  fmt::print("\nschedules (--schedule): single | splits=N | split-len=K | chunk=K | "
             "balanced=B/U/O | table=FILE, "
             "optionally ,tile=T (problem/schedule.h)\n");

  fmt::print("\nGPU kernel families (the strategy names' last part; gpu/family.h):\n");
  for (const gpu::Family* f : gpu::families()) {
    const auto missing = gpu::not_built_here(*f);
    fmt::print("  {:<9} compiled for {:<15} {}\n            {}\n            split-K merge weights: {}\n"
               "            softmax base: {}\n",
               f->name, gpu::vendors_text(f->vendors),
               missing ? "not in this binary: " + *missing : std::string("in this binary"), f->summary,
               gpu::merge_weights_text(f->merge_weights),
               f->softmax_base ? std::string(problem::to_string(*f->softmax_base)) + " for every recipe"
                               : std::string("the recipe's"));
  }

  fmt::print("\nGPU strategies (mlacheck verify/bench --strategy GLOB):\n");
  fmt::print("  {:<33} {:<26} {:<12} {:>7} {:>6}  {}\n", "name", "recipe", "schedule", "threads",
             "splits", "why these tunables");
  for (const gpu::Strategy& s : gpu::strategies())
    fmt::print("  {:<33} {:<26} {:<12} {:>7} {:>6}  {}\n", s.name, problem::spell(s.recipe),
               gpu::to_string(s.schedule),
               s.tunables.threads > 0 ? std::to_string(s.tunables.threads) : "kernel",
               s.schedule != gpu::Schedule::split_k ? "-"
               : s.tunables.split_rule            ? "rule"
                                                  : std::to_string(s.tunables.splits),
               s.why);

  const auto device = gpu::device_multiprocessors();
  fmt::print("\nSplit plans are made for the multiprocessors of the device that runs them: {}\n",
             device ? fmt::format("{} on this machine's GPU", *device)
                    : fmt::format("no GPU here, so {} (the H200's) where a plan is only emulated",
                                  gpu::kPlanningMultiprocessorsWithoutGpu));
  fmt::print("\nTunables of the mma strategies (data/tunables/fast.def):\n");
  for (const gpu::fast::TunableRow& t : gpu::fast::tunables())
    fmt::print("  {:<18} {:>5}  {}\n", t.name, t.value, t.chosen_by);
  return kExitOk;
}

}  // namespace

void add_list_command(CLI::App& app, Runner& run) {
  CLI::App* sub = app.add_subcommand("list", "List quantization formats and recipes");
  sub->callback([&run] { run = run_list; });
}

}  // namespace mlacheck::cli
