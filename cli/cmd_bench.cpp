// `mlacheck bench [--strategy GLOB] [--cases FILE] [--case NAME,...] [--reps N] [--graph]
// [--plan-once] [--json F]`: per strategy and case, the GPU time of one decode call (Q quantization, attention,
// merge) over many repetitions timed with device events, each after a read of a 256 MB buffer that
// flushes L2; with --graph the call is captured once and replayed from a graph, which takes the
// launch overhead out. Reports the median and p10/p90, the bytes a decode must move at least (each
// KV row the batch reads once, Q, the output and LSE) per median time, and that rate as a share of
// the read ceiling the same binary measures first on the same GPU with a streaming-read kernel.
// Nothing is printed that was not measured; without a GPU it says so and measures nothing.
// --shard i/n times one share of the cases (cli/shard.h). --stamps (a -DMLACHECK_HOPPER_STAMPS=ON
// build) adds under each row where its hopper blocks' time went, from one more untimed call
// (gpu/stamps.h). --splits, --chunks, --overheads and --merge time variants of the matches (rows
// STRATEGY@...): the measurements behind the split rule, the plans' tunables and the merge's place.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/json_report.h"
#include "cli/read_ceiling_note.h"
#include "cli/case_tier.h"
#include "cli/gpu_cases.h"
#include "cli/shard.h"
#include "cli/stamps_text.h"
#include "cli/version.h"
#include "gpu/availability.h"
#include "gpu/hopper/merge_choice.h"
#include "gpu/registry.h"
#include "gpu/stamps.h"
#include "problem/batch.h"
#include "problem/shape.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#include "gpu/timing.h"
#endif

namespace mlacheck::cli {
namespace {

struct BenchOptions {
  std::string case_list;
  CaseTier tier = CaseTier::standard;
  bool tier_given = false;
  std::vector<std::string> case_names;
  std::string strategy = "*";
  std::optional<std::string> json;
  int reps = 50;
  int warmup = 3;
  bool graph = false;
  int flush_mb = 256;     // > 4x the 60 MB L2 of an H200 (50 MB on an H100)
  int ceiling_mb = 2048;  // read-ceiling buffer: far past any cache
  // Split counts to time instead of each split-K strategy's own (the measurement that tunes a split
  // rule); rows are named STRATEGY@splits=N.
  std::vector<int> splits;
  // Work-item sizes (keys) to time instead of each persistent strategy's own; rows
  // STRATEGY@chunk=N.
  std::vector<int> chunks;
  // Request overheads (tiles) to time instead of each balanced persistent strategy's own; rows
  // STRATEGY@overhead=N.
  std::vector<int> overheads;
  // Where each split-K strategy merges its partials instead of its family's rule (hopper:
  // gpu::ClusterMerge); rows STRATEGY@merge=M.
  std::vector<std::string> merges;  // rule, cluster, kernel (merge_named)
  std::optional<Shard> shard;  // --shard i/n: this share of the cases (cli/shard.h)
  // Persistent strategies with a balanced plan: the work list made by one untimed call per case and
  // reused by every timed call (DecodeParams::reuse_plan); rows STRATEGY@plan-once.
  bool plan_once = false;
  // After each row's timing, one more call (after the flush, not timed) whose hopper blocks stamp
  // their points (gpu/stamps.h); a stamps build only.
  bool stamps = false;
};

// --merge's choices, by their names (gpu::to_string(ClusterMerge)): the option's check and the
// lookup below both take them from here.
constexpr std::array kMerges{gpu::ClusterMerge::family_rule, gpu::ClusterMerge::cluster, gpu::ClusterMerge::kernel};
std::vector<std::string> merge_names() {
  std::vector<std::string> names;
  for (const gpu::ClusterMerge m : kMerges) names.emplace_back(gpu::to_string(m));
  return names;
}
gpu::ClusterMerge merge_named(const std::string& name) {
  for (const gpu::ClusterMerge m : kMerges)
    if (gpu::to_string(m) == name) return m;
  throw std::invalid_argument("--merge: '" + name + "' names no merge");  // the option's check admits none such
}

// Each split-K variant once per merge of --merge (none: as it is).
void add_merge_variants(std::vector<gpu::Strategy>& out, gpu::Strategy v, const std::vector<std::string>& merges) {
  if (merges.empty() || v.schedule != gpu::Schedule::split_k) {
    out.push_back(std::move(v));
    return;
  }
  for (const std::string& name : merges) {
    const gpu::ClusterMerge m = merge_named(name);
    gpu::Strategy w = v;
    w.tunables.cluster_merge = m;
    w.name += "@merge=" + std::string(gpu::to_string(m));
    out.push_back(std::move(w));
  }
}

// The strategies to time: the matches themselves, or with --splits each split-K match once per
// forced split count, and with --merge each of those once per merge.
std::vector<gpu::Strategy> bench_variants(const std::vector<const gpu::Strategy*>& matches,
                                          const std::vector<int>& splits,
                                          const std::vector<int>& chunks,
                                          const std::vector<int>& overheads,
                                          const std::vector<std::string>& merges) {
  std::vector<gpu::Strategy> out;
  for (const gpu::Strategy* s : matches) {
    if (!overheads.empty() && s->schedule == gpu::Schedule::persistent) {
      for (const int n : overheads) {
        gpu::Strategy v = *s;
        v.tunables.balanced_overhead = n;
        v.name += "@overhead=" + std::to_string(n);
        out.push_back(std::move(v));
      }
      continue;
    }
    if (!chunks.empty() && s->schedule == gpu::Schedule::persistent) {
      for (const int n : chunks) {
        gpu::Strategy v = *s;
        v.tunables.chunk_keys = n;
        v.name += "@chunk=" + std::to_string(n);
        out.push_back(std::move(v));
      }
      continue;
    }
    if (splits.empty() || s->schedule != gpu::Schedule::split_k) {
      add_merge_variants(out, *s, merges);
      continue;
    }
    for (const int n : splits) {
      gpu::Strategy v = *s;
      v.tunables.split_rule = false;
      v.tunables.splits = n;
      v.name += "@splits=" + std::to_string(n);
      add_merge_variants(out, std::move(v), merges);
    }
  }
  return out;
}

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
struct Stats {
  double median = 0, p10 = 0, p90 = 0;  // milliseconds
};

// Nearest-rank percentiles of the sorted sample.
Stats stats_of(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1) + 0.5);
    return static_cast<double>(ms[std::min(i, ms.size() - 1)]);
  };
  return {at(0.5), at(0.1), at(0.9)};
}

// Bytes one decode must move at least: every cache row the batch reads once (in its format), Q in
// bf16, the bf16 output and the float32 LSE.
int64_t min_bytes(const problem::Batch& batch, problem::KvFormat kv) {
  int64_t row = 0;
  switch (kv) {
    case problem::KvFormat::bf16: row = problem::kQkDim * 2; break;
    case problem::KvFormat::fp8: row = problem::kQkDim; break;
    case problem::KvFormat::mxfp4: row = problem::kMxfp4RowBytes + problem::kMxfp4RowScales; break;
  }
  const int64_t tokens = batch.total_q();
  return batch.total_kv() * row + tokens * problem::kNumHeads * problem::kQkDim * 2 +
         tokens * problem::kNumHeads * (problem::kVDim * 2 + 4);
}
#endif

int run_bench(const BenchOptions& o) {
  require_distinct({{"--json", o.json.value_or("")}}, {{"--case-list", o.case_list}});
  if (o.reps < 1 || o.warmup < 0 || o.flush_mb < 0 || o.ceiling_mb < 1)
    throw std::invalid_argument("--reps >= 1, --warmup >= 0, --flush-mb >= 0, --ceiling-mb >= 1");
  for (const int n : o.splits)
    if (n < 1 || n > 256) throw std::invalid_argument("--splits: each count in 1..256");
  for (const int n : o.chunks)
    if (n < 1) throw std::invalid_argument("--chunks: each size >= 1 key");
  for (const int n : o.overheads)
    if (n < 0) throw std::invalid_argument("--overheads: each overhead >= 0 tiles");
  if (o.stamps && !gpu::kernel_stamps_built())
    throw std::invalid_argument(
        "--stamps: this binary was built without the kernel stamps (configure a CUDA build for sm_90a with "
        "-DMLACHECK_HOPPER_STAMPS=ON; gpu/stamps.h)");
  if (!o.chunks.empty() && !o.overheads.empty())
    throw std::invalid_argument("--chunks and --overheads: one or the other (a plan is chunked or balanced)");
  // Timing defaults to the harness shapes (the figures compared with FlashMLA in docs/PERF.md).
  const std::string list = !o.case_list.empty() ? o.case_list
                           : o.tier_given       ? tier_case_list(o.tier)
                                                : data_case_list("default.txt");
  const std::vector<ref::CaseSpec> listed = select_cases(list, o.case_names);
  const std::vector<ref::CaseSpec> cases = o.shard ? cases_of_shard(listed, *o.shard) : listed;
  const std::vector<const gpu::Strategy*> matches = gpu::match_strategies(o.strategy);
  if (matches.empty())
    throw std::invalid_argument("no strategy matches '" + o.strategy + "' (see `mlacheck list`)");
  const std::vector<gpu::Strategy> variants = bench_variants(matches, o.splits, o.chunks, o.overheads, o.merges);
  if (o.shard) {
    fmt::print("mlacheck bench: {}{}\n", shard_summary(*o.shard, cases.size(), listed.size(), "cases"),
               cases.empty() ? "" : " (balanced by " + case_cost_rule() + ")");
    if (cases.empty()) return kExitOk;  // nothing to time: no ceiling measured, no JSON written
  }
  if (const auto why = gpu::unavailable_reason()) {
    fmt::print("mlacheck bench: GPU not available ({}); nothing measured\n", *why);
    return kExitOk;
  }
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const gpu::DeviceInfo dev = gpu::device_info();
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // The read ceiling: a streaming read of ceiling_mb, timed like the strategies (median).
  double ceiling_gbps = 0;
  Stats ceiling;
  {
    const gpu::StreamReader reader(static_cast<std::size_t>(o.ceiling_mb) * kMiB);
    const std::vector<float> ms = gpu::time_launches(
        [&](gpu::StreamHandle s) { reader.read(s); }, nullptr, std::max(o.reps, 20), 2, false,
        nullptr);
    ceiling = stats_of(ms);
    ceiling_gbps = static_cast<double>(reader.bytes()) / (ceiling.median * 1e-3) / 1e9;
  }
  const std::unique_ptr<gpu::StreamReader> flusher =
      o.flush_mb > 0 ? std::make_unique<gpu::StreamReader>(static_cast<std::size_t>(o.flush_mb) * kMiB)
                     : nullptr;
  fmt::print("mlacheck bench ({}): {} ({} SMs/CUs, L2 {} MB, {:.0f} GB)\n", version_string(),
             dev.name, dev.multiprocessors, dev.l2_bytes / 1e6, dev.memory_bytes / 1e9);
  fmt::print("read ceiling: {:.0f} GB/s (streaming read of {} MB, median of {}: {:.3f} ms)\n",
             ceiling_gbps, o.ceiling_mb, std::max(o.reps, 20), ceiling.median);
  fmt::print("{} reps after {} warm-up, L2 flushed by a {} MB read before each, {}\n", o.reps,
             o.warmup, o.flush_mb, o.graph ? "graph replay" : "stream launches");
  fmt::print("GB/s = bytes a decode must move (each KV row read once, Q, out, LSE) / median time\n");
  if (o.stamps)
    fmt::print("stamps: from one more call per row, after the flush and not timed (a stamps build: each stamp is a "
               "store on the kernel's chain, so its times are not the table's)\n");
  if (o.plan_once)
    fmt::print("@plan-once: the work list made by one untimed call per case, each timed call reusing it, as one "
               "decode step's layers share one plan (FlashMLA's get_mla_metadata, FlashInfer's plan())\n");
  fmt::print("\n");
  fmt::print("{:<16} {:<42} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}\n", "case", "strategy",
             "median us", "p10 us", "p90 us", "MB", "GB/s", "% ceil");

  nlohmann::json rows = nlohmann::json::array();
  int rows_above_ceiling = 0;  // read_ceiling_note
  double best_pct = 0;
  for (const ref::CaseSpec& spec : cases) {
    PreparedCase pc(spec);
    const ref::Inputs& in = pc.inputs();
    gpu::DeviceProblem device(in.batch, in.q);
    for (const gpu::Strategy& variant : variants) {
      const gpu::Strategy* s = &variant;
      const problem::KvCache cache = pc.cache_for(s->recipe);
      // The batch's shape beside its name, so that a same-run comparison with another kernel's
      // results can check it timed the same batch (scripts/bf16-bar.py), not just a like name.
      nlohmann::json j{{"case", spec.name},           {"strategy", s->name},
                       {"batch", in.batch.num_requests()}, {"total_q", in.batch.total_q()},
                       {"total_kv", in.batch.total_kv()}};
      if (const auto why = s->supports(in.batch, cache)) {
        fmt::print("{:<16} {:<42} unsupported: {}\n", spec.name, s->name, *why);
        j["unsupported"] = *why;
        rows.push_back(j);
        continue;
      }
      gpu::DecodeParams params = device.params(*s, cache);
      std::string name = s->name;
      if (s->tunables.cluster_merge == gpu::ClusterMerge::cluster) {
        // A row named @merge=cluster where no cluster could merge would time the merge kernel.
        const int splits = s->emulated_plan(in.batch, params.multiprocessors).num_splits;
        if (const auto refusal = gpu::hopper::cluster_merge_refusal(splits)) {
          const std::string why = "--merge cluster: " + *refusal;
          fmt::print("{:<16} {:<42} unsupported: {}\n", spec.name, s->name, why);
          j["unsupported"] = why;
          rows.push_back(j);
          continue;
        }
      }
      if (o.plan_once) {
        const problem::SplitPlan plan = s->emulated_plan(in.batch, params.multiprocessors);
        if (plan.chunk_keys > 0) {
          const std::string why = "--plan-once: a chunked plan's work list is consumed by its call";
          fmt::print("{:<16} {:<42} unsupported: {}\n", spec.name, s->name, why);
          j["unsupported"] = why;
          rows.push_back(j);
          continue;
        }
        if (plan.is_balanced()) {  // the work list made once, outside the timing
          s->launch(params, device.stream());
          gpu::synchronize(device.stream());
          params.reuse_plan = true;
          name += "@plan-once";
          j["strategy"] = name;
        }
      }
      const std::vector<float> ms = gpu::time_launches(
          [&](gpu::StreamHandle stream) { s->launch(params, stream); }, device.stream(), o.reps,
          o.warmup, o.graph, flusher.get());
      const Stats st = stats_of(ms);
      const int64_t bytes = min_bytes(in.batch, s->recipe.kv);
      const double gbps = static_cast<double>(bytes) / (st.median * 1e-3) / 1e9;
      const double pct = 100.0 * gbps / ceiling_gbps;
      fmt::print("{:<16} {:<42} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>8.0f} {:>7.1f}%\n",
                 spec.name, name, st.median * 1e3, st.p10 * 1e3, st.p90 * 1e3, bytes / 1e6,
                 gbps, pct);
      std::fflush(stdout);
      j["median_us"] = st.median * 1e3;
      j["p10_us"] = st.p10 * 1e3;
      j["p90_us"] = st.p90 * 1e3;
      j["bytes"] = bytes;
      j["gbps"] = gbps;
      j["pct_of_read_ceiling"] = pct;
      rows_above_ceiling += pct > 100.0 ? 1 : 0;
      best_pct = std::max(best_pct, pct);
      j["times_ms"] = ms;
      if (o.stamps) {
        if (flusher) flusher->read(device.stream());
        gpu::reset_kernel_stamps(device.stream());
        s->launch(params, device.stream());
        const std::vector<gpu::StampSpread> spreads = gpu::summarize_stamps(gpu::read_kernel_stamps(device.stream()));
        fmt::print("{}", stamps_text(spreads));
        std::fflush(stdout);
        j["stamps"] = stamps_json(spreads);
      }
      rows.push_back(j);
    }
  }
  if (const auto note = read_ceiling_note(rows_above_ceiling, best_pct)) fmt::print("\n{}\n", *note);
  if (o.json) {
    nlohmann::json j{{"version", std::string(version_string())},
                     {"device", {{"name", dev.name},
                                 {"multiprocessors", dev.multiprocessors},
                                 {"l2_bytes", dev.l2_bytes},
                                 {"memory_bytes", dev.memory_bytes}}},
                     {"read_ceiling", {{"gbps", ceiling_gbps},
                                       {"bytes", static_cast<int64_t>(o.ceiling_mb) * (1 << 20)},
                                       {"median_ms", ceiling.median},
                                       {"rows_above", rows_above_ceiling}}},
                     {"reps", o.reps},
                     {"warmup", o.warmup},
                     {"graph", o.graph},
                     {"flush_mb", o.flush_mb},
                     {"plan_once", o.plan_once},
                     {"stamps", o.stamps},
                     {"cases", list},
                     {"rows", rows}};
    if (o.shard)
      j["shard"] = {{"index", o.shard->index}, {"count", o.shard->count}, {"cases", cases.size()},
                    {"of_cases", listed.size()}};
    write_json_report(*o.json, j);
  }
  return kExitOk;
#else
  return kExitOk;  // unreachable: unavailable_reason() is set in a build without a GPU runtime
#endif
}

}  // namespace

void add_bench_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Time GPU strategies on cases with device events (median, p10, p90), L2 flushed "
               "between repetitions; GB/s and % of the measured read ceiling");
  CLI::Option* list = sub->add_option(
      "--cases,--case-list", o->case_list,
      "case list file (default: $MLACHECK_DATA_DIR/cases/default.txt, else data/cases/default.txt: "
      "the 8 harness shapes)");
  CLI::Option* tier = add_tier_option(*sub, o->tier, "default: none, the harness shapes");
  tier->excludes(list);
  sub->add_option("--case", o->case_names, "only these case names (comma-separated)")
      ->delimiter(',');
  sub->add_option("--strategy", o->strategy, "glob over registry names (* and ?), or several separated by commas")->capture_default_str();
  sub->add_option("--json", o->json, "write every measurement (all repetition times) as JSON");
  sub->add_option("--reps", o->reps, "timed repetitions per strategy and case")
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed calls first")->capture_default_str();
  sub->add_flag("--graph", o->graph, "capture the call in a graph and time graph replays");
  sub->add_option("--splits", o->splits,
                  "time each split-K strategy with each of these split counts instead of its own "
                  "(comma-separated; rows STRATEGY@splits=N)")
      ->delimiter(',');
  sub->add_option("--chunks", o->chunks,
                  "time each persistent strategy with each of these work-item sizes (keys) instead "
                  "of its own (comma-separated; rows STRATEGY@chunk=N)")
      ->delimiter(',');
  sub->add_option("--overheads", o->overheads,
                  "time each persistent strategy of a balanced plan (hopper) with each of these "
                  "request overheads (tiles) instead of its own (comma-separated; rows "
                  "STRATEGY@overhead=N; other families refuse them)")
      ->delimiter(',');
  sub->add_option("--merge", o->merges,
                  "time each split-K strategy with each of these merges of its partials: rule (its family's "
                  "choice), cluster (in the hopper kernel's clusters: 2 to 8 splits, refused otherwise; the "
                  "merge kernel where a batch has more requests than clusters run at once), kernel (the merge "
                  "kernel) (comma-separated; rows STRATEGY@merge=M; other families refuse all but rule)")
      ->delimiter(',')
      ->check(CLI::IsMember(merge_names()))
      ->option_text("rule|cluster|kernel ...");
  sub->add_flag("--plan-once", o->plan_once,
                "persistent strategies of a balanced plan (hopper): make the work list in one untimed "
                "call per case and time calls that reuse it, as one decode step's layers share one plan "
                "(FlashMLA's get_mla_metadata, FlashInfer's plan()); rows STRATEGY@plan-once");
  sub->add_flag("--stamps", o->stamps,
                "after each row, one more untimed call whose hopper blocks stamp where their time went "
                "(cycles after each block's entry: Q staged, tiles done, quotients, stores...); a build "
                "with -DMLACHECK_HOPPER_STAMPS=ON only (gpu/stamps.h)");
  sub->add_option("--flush-mb", o->flush_mb, "MB read before each repetition (0: no flush)")
      ->capture_default_str();
  sub->add_option("--ceiling-mb", o->ceiling_mb, "MB read by the read-ceiling measurement")
      ->capture_default_str();
  add_shard_option(*sub, o->shard, "cases (after --case), balanced by their cost, " + case_cost_rule());
  sub->callback([&run, o, tier] {
    o->tier_given = tier->count() > 0;
    run = [o] { return run_bench(*o); };
  });
}

}  // namespace mlacheck::cli
