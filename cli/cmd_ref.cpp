// `mlacheck ref IN OUT`: complete a file holding at least q, kv, qo_indptr and kv_indptr into a
// golden file: quantized caches (unless IN has them), exact and emulated outputs.
#include <string>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/golden_case.h"

namespace mlacheck::cli {
namespace {

struct RefOptions {
  std::string in, out;
  std::string recipes = "all";
};

int run_ref(const RefOptions& o) {
  require_distinct({{"OUT", o.out}}, {{"IN", o.in}});
  const std::vector<problem::Recipe> recipes = parse_recipes(o.recipes);
  const io::SafetensorsReader reader(o.in);
  require_memory(golden_case_bytes(case_size(reader), recipes.size(), caches_in(reader)), "ref " + o.in);
  GoldenCase c = read_case(reader);
  complete(c, recipes);
  write_case(c, o.out);
  fmt::print("wrote {}: {} requests, {} queries, {} cache rows, {} recipes\n", o.out, c.batch.num_requests(),
             c.batch.total_q(), c.batch.cache_rows(), c.emulated.size());
  return kExitOk;
}

}  // namespace

void add_ref_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<RefOptions>();
  CLI::App* sub = app.add_subcommand(
      "ref", "Complete IN (q BF16 [T,16,576], kv BF16 [N,1,576], qo_indptr and kv_indptr I32, optional "
             "kv_indices + page_size metadata) into the golden file OUT: kv_fp8/kv_mxfp4 caches unless IN "
             "has them, out_exact/lse_exact and out_<recipe>/lse_<recipe> (always recomputed)");
  sub->add_option("IN", o->in, "input safetensors file")->required();
  sub->add_option("OUT", o->out, "golden file to write")->required();
  sub->add_option("--recipes", o->recipes, "comma-separated recipes to emulate, or all")->capture_default_str();
  sub->callback([&run, o] { run = [o] { return run_ref(*o); }; });
}

}  // namespace mlacheck::cli
