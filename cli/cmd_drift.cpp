// `mlacheck drift GOLDEN OUTPUT --recipe R [--schedule S]`: where a kernel's error comes from
// (check/drift.h). `mlacheck drift --case C --strategy S` does the same for one of this binary's
// GPU strategies on one case: it runs the strategy, captures its intermediates from the launch's
// workspace into a golden file and an output file (cli/gpu_capture.h) and judges those. The output file holds `out` and, optionally, what the kernel computed on the
// way (io/golden.h, "Kernel intermediates"): `lse`, `partial_out` / `partial_lse`, `q_fp8` +
// `q_scale` or `q_mxfp4` + `q_mxfp4_scale`. Prints the recipe waterfall, each intermediate stage
// against the emulation's with the first one out of its bound, and error maps (PNG with --maps,
// JSON with --json). Exit 0 when every stage present is within its bound, 1 otherwise, 2 on bad
// input.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/data_scale.h"
#include "check/drift.h"
#include "check/gate.h"
#include "check/heatmap.h"
#include "check/lse.h"
#include "check/tolerance.h"
#include "check/ulp.h"
#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/case_tier.h"
#include "cli/golden_inputs.h"
#include "cli/gpu_capture.h"
#include "cli/gpu_cases.h"
#include "cli/json_report.h"
#include "cli/progress_printer.h"
#include "cli/shell_quote.h"
#include "gpu/mutants.h"
#include "gpu/registry.h"
#include "io/atomic_file.h"
#include "io/golden.h"
#include "io/safetensors.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "quant/fp8.h"
#include "ref/emulated_inputs.h"

namespace mlacheck::cli {
namespace {

using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
using problem::Schedule;
namespace it = io::golden::intermediate;

struct DriftOptions {
  std::string golden, output, recipe;
  std::vector<std::pair<std::string, std::string>> fields;
  std::optional<std::string> schedule;
  std::string tensor = "out";
  std::string empty_rows = "zero";
  std::optional<std::string> maps;
  std::optional<std::string> json;
  // --strategy mode: run this strategy on --case of --case-list, capture into --capture.
  std::optional<std::string> strategy, case_name, case_list;
  std::string capture = "drift-capture";
  // A planted fault the captured run carries (gpu/mutants.h; a -DMLACHECK_MUTANTS=ON build only):
  // how the device check shows that drift names the stage a GPU bug is in.
  std::optional<std::string> mutant;
  // --strategy mode: the order its kernel feeds fp8 products to the tensor core (fp8-acc tc64 / tc;
  // gpu::Strategy), for every emulation of the judged run. Empty: in order.
  std::span<const int> tc_qk_order, tc_pv_order;
};

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

// (a) The recipe with one rounding made exact at a time.
check::Waterfall waterfall(const JudgedGolden& g, const problem::Recipe& recipe,
                           const Schedule& schedule, const ref::EmulatedResult& base,
                           const std::vector<float>& output, const ref::EmulationOptions& orders) {
  check::Waterfall w;
  const std::vector<float> base_out = widen_bf16(base.out);
  w.recipe_error = check::rel_fro(base_out, g.exact);
  w.kernel_total = check::rel_fro(output, g.exact);
  w.kernel_error = check::rel_fro(output, base_out);
  const auto stage = [&](const std::string& name, problem::Recipe r, ref::EmulationOptions o) {
    ProgressPrinter progress("drift: exact " + name);
    const ref::EmulatedResult e = g.emulate(r, schedule, o, &progress);
    w.stages.push_back({name, check::rel_fro(widen_bf16(e.out), g.exact), 0});
  };
  using problem::KvFormat;
  if (recipe.q != problem::QFormat::bf16) {
    ref::EmulationOptions o = orders;
    o.exact_q = true;
    stage("Q quantization", recipe, o);
  }
  if (recipe.kv != KvFormat::bf16) {
    ref::EmulationOptions o = orders;
    o.exact_k = true;
    stage("K quantization", recipe, o);
    o.exact_k = false;
    o.exact_v = true;
    stage("V quantization", recipe, o);
  }
  if (recipe.p != problem::PFormat::f32) {
    problem::Recipe r = recipe;
    r.p = problem::PFormat::f32;
    stage("P rounding", r, orders);
  }
  if (recipe.fp8_acc != problem::Fp8Accumulation::f32) {
    problem::Recipe r = recipe;
    r.fp8_acc = problem::Fp8Accumulation::f32;
    stage("fp8 tensor-core sums", r, {});
  }
  if (recipe.partial == problem::PartialFormat::bf16 && schedule.split_k()) {
    problem::Recipe r = recipe;
    r.partial = problem::PartialFormat::f32;
    stage("split partial rounding", r, {});
  }
  w.stages.push_back({"output rounding", check::rel_fro(base.out_f32, g.exact), 0});
  check::finish_waterfall(w);
  return w;
}

// The kernel's quantized Q against the recipe's, value for value (decoded) and the scale.
check::StageCheck q_stage(const JudgedGolden& g, const problem::Recipe& recipe,
                          const io::SafetensorsReader& f) {
  check::StageCheck s{"Q codes"};
  const int64_t tokens = g.inputs.batch.total_q();
  const bool fp8 = f.contains(it::q_fp8), mx = f.contains(it::q_mxfp4);
  if (!fp8 && !mx) {
    s.detail = fmt::format("no '{}' or '{}' in the output file", it::q_fp8, it::q_mxfp4);
    return s;
  }
  s.present = true;
  const ref::EmulatedQ want = ref::quantize_q(g.inputs.q, recipe);
  std::vector<float> got(want.values.size());
  float got_scale = 1.0f;
  if (fp8) {
    if (recipe.q == problem::QFormat::bf16 || recipe.q == problem::QFormat::mxfp4_dynamic)
      fail(fmt::format("{}: holds '{}' but recipe {} does not quantize Q to fp8", f.path().string(),
                       it::q_fp8, problem::spell(recipe)));
    const io::Tensor t = f.read(std::string(it::q_fp8));
    if (t.numel() != tokens * kNumHeads * kQkDim || t.view<uint8_t>().size() != got.size())
      fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}, 16, 576] (U8 or F8_E4M3)",
                       f.path().string(), it::q_fp8, t.shape_string(), tokens));
    const auto codes = t.view<uint8_t>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = quant::fp8_to_f32(codes[i], recipe.fp8);
    if (want.scaled) {
      const auto scale = read_float_tensor(f, std::string(it::q_scale), {1});
      if (!scale) fail(fmt::format("{}: '{}' needs '{}' [1] (F32)", f.path().string(), it::q_fp8, it::q_scale));
      got_scale = (*scale)[0];
    }
  } else {
    if (recipe.q != problem::QFormat::mxfp4_dynamic)
      fail(fmt::format("{}: holds '{}' but recipe {} does not quantize Q to MXFP4",
                       f.path().string(), it::q_mxfp4, problem::spell(recipe)));
    const io::Tensor p = f.read(std::string(it::q_mxfp4));
    const io::Tensor sc = f.read(std::string(it::q_mxfp4_scale));
    if (p.view<uint8_t>().size() != got.size() / 2 ||
        sc.view<uint8_t>().size() != got.size() / problem::kMxfp4Block)
      fail(fmt::format("{}: '{}' {} / '{}' {}: expected [{}, 16, 288] and [{}, 16, 18] (U8)",
                       f.path().string(), it::q_mxfp4, p.shape_string(), it::q_mxfp4_scale,
                       sc.shape_string(), tokens, tokens));
    quant::mxfp4_dequantize(p.view<uint8_t>(), sc.view<uint8_t>(), kQkDim, got);
  }
  int64_t differ = 0;
  std::size_t first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (__builtin_bit_cast(uint32_t, got[i]) != __builtin_bit_cast(uint32_t, want.values[i])) {
      if (first == got.size()) first = i;
      ++differ;
    }
  const bool scale_ok = !want.scaled || got_scale == want.scale;
  s.pass = differ == 0 && scale_ok;
  s.detail = fmt::format("{} of {} elements differ from the recipe's quantization", differ, got.size());
  if (first < got.size())
    s.detail += fmt::format(" (first [{}, {}, {}]: {:.6e} vs {:.6e})", first / (kNumHeads * kQkDim),
                            first / kQkDim % kNumHeads, first % kQkDim, got[first], want.values[first]);
  if (want.scaled)
    s.detail += fmt::format("; scale {:.9e} vs {:.9e}{}", got_scale, want.scale,
                            scale_ok ? "" : " (differs)");
  return s;
}

struct PartialStages {
  check::StageCheck partials{"split partials"}, lses{"split LSEs"}, merge{"merge"};  // not present until read
  std::vector<double> token_split;  // [T, S] worst ratio
  int64_t splits = 0;
};

// (b) The kernel's split partials against the emulation's, and its merge of its own partials.
PartialStages partial_stages(const JudgedGolden& g, const problem::Recipe& recipe,
                             const Schedule& schedule, const ref::EmulatedResult& base,
                             const io::SafetensorsReader& f, const std::vector<float>& output) {
  PartialStages r;
  if (!f.contains(it::partial_out) || !f.contains(it::partial_lse)) {
    r.partials.detail = r.lses.detail = r.merge.detail =
        fmt::format("no '{}' + '{}' in the output file", it::partial_out, it::partial_lse);
    return r;
  }
  const problem::Batch& b = g.inputs.batch;
  const int64_t tokens = b.total_q(), S = base.partial_splits;
  std::vector<int64_t> shape;
  const std::vector<float> po = *read_float_tensor(f, std::string(it::partial_out), {tokens, -1, kNumHeads, kVDim}, &shape);
  if (shape[1] != S)
    fail(fmt::format("{}: '{}' holds {} splits per query, the schedule {} makes {}; declare the "
                     "kernel's schedule with --schedule",
                     f.path().string(), it::partial_out, shape[1], to_string(schedule), S));
  const std::vector<float> pl = *read_float_tensor(f, std::string(it::partial_lse), {tokens, S, kNumHeads});
  r.partials.present = r.lses.present = r.merge.present = true;
  r.splits = S;

  // Each (token, split) judged as a decode of the split's visible keys.
  std::vector<int64_t> request, visible;
  const problem::BatchSplits splits(schedule, b.kv_indptr());
  for (int64_t q = 0; q < b.num_requests(); ++q)
    for (int64_t i = 0; i < b.q_len(q); ++i) {
      const std::vector<problem::KeyRange> ranges = splits.ranges(q);
      const int64_t vis = b.visible_kv(q, i);
      for (int64_t s = 0; s < S; ++s) {
        request.push_back(q);
        const bool exists = s < static_cast<int64_t>(ranges.size());
        visible.push_back(exists ? std::max<int64_t>(0, std::min(ranges[s].end, vis) - ranges[s].begin) : 0);
      }
    }
  const check::OutputLayout split_layout(request, visible);
  // The split's P code flips measured as for the output (kernel_bound's p_flip overload): the
  // generic one-flip-per-row term, 2^-7 p_max Vmax with bf16 P, is many times a 32-key split's
  // actual error and hid faults of that size.
  const check::Bound bound =
      check::kernel_bound(with_schedule(recipe, schedule), g.data, split_layout, base.partial_p_flip);
  const double f32_slack = recipe.partial == problem::PartialFormat::bf16 ? 1.5 : 0.0;
  r.token_split.assign(static_cast<std::size_t>(tokens * S), 0.0);
  int64_t beyond = 0, worst_i = -1;
  for (std::size_t i = 0; i < po.size(); ++i) {
    const auto ts = static_cast<int64_t>(i / (kNumHeads * kVDim));
    const std::size_t split_row = static_cast<std::size_t>(ts) * kNumHeads + i / kVDim % kNumHeads;
    const int64_t keys = visible[static_cast<std::size_t>(ts)];
    const double ref = base.partial_out[i];
    const double slack = f32_slack > 0 ? f32_slack * check::bf16_ulp(ref) : 4 * std::ldexp(std::fabs(ref), -23);
    // A kernel that sums the split's l from its rounded P divides the partial by l' and reports
    // lse' = m + ln l' (check/lse.h): the partial moves by l / l' (within a relative
    // delta / (1 - delta) of 1) and its LSE by ln(l' / l), so the split's share of the merge,
    // o e^lse, does not move. Where the kernel's LSE lies within its bound, the partial is judged
    // as that share, o e^(lse_got - lse_ref) against o_ref, with only the LSE's float32 noise
    // added: a fault that moves the share by less than l / l' may (skipped rope dims on 32-key
    // splits: 0.68x of the old allowance, 9.6x at the output). Elsewhere, the LSE being judged
    // wrong by its own stage, the value alone, with the rescaling allowed.
    const double delta = base.partial_sum_rounding[split_row];
    const double lse_got = pl[split_row], lse_ref = base.partial_lse[split_row];
    const double lse_shift = lse_got - lse_ref;
    const bool share = std::isfinite(lse_got) && std::isfinite(lse_ref) && keys > 0 &&
                       std::fabs(lse_shift) <= check::lse_tolerance(lse_ref, keys, delta);
    const double got = share ? po[i] * std::exp(lse_shift) : po[i];
    const double rescaled = share       ? std::fabs(ref) * std::expm1(check::lse_tolerance(lse_ref, keys))
                            : delta < 1 ? std::fabs(ref) * delta / (1 - delta)
                                        : INFINITY;
    const double tol = bound.elem_abs[static_cast<std::size_t>(ts)] + bound.elem_extra[i] + rescaled + slack;
    double ratio = 0;
    if (keys == 0) {
      ratio = po[i] == 0 || !std::isfinite(po[i]) ? 0.0 : INFINITY;  // an empty split: 0 (or undefined)
    } else if (!std::isfinite(got)) {
      ratio = INFINITY;
    } else {
      const double err = std::fabs(got - ref);
      ratio = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0);
    }
    if (ratio > 1) ++beyond;
    if (ratio > r.partials.worst_ratio) r.partials.worst_ratio = ratio, worst_i = static_cast<int64_t>(i);
    double& cell = r.token_split[static_cast<std::size_t>(ts)];
    cell = std::max(cell, ratio);
  }
  r.partials.pass = beyond == 0;
  r.partials.detail = fmt::format("{} of {} elements beyond the kernel bound of their split (worst {:.2f} x", beyond,
                                  po.size(), r.partials.worst_ratio);
  if (worst_i >= 0) {
    const int64_t ts = worst_i / (kNumHeads * kVDim);
    r.partials.detail += fmt::format(" at token {} split {} head {} dim {}", ts / S, ts % S,
                                     worst_i / kVDim % kNumHeads, worst_i % kVDim);
  }
  r.partials.detail += ")";
  // LSEs of the splits: empty splits are -inf in both (or anything, their weight being 0).
  std::vector<float> lse_got = pl, lse_want = base.partial_lse;
  for (std::size_t i = 0; i < lse_got.size(); ++i)
    if (visible[i / kNumHeads] == 0) lse_got[i] = lse_want[i];
  // A kernel may sum each split's l from its rounded P (check/lse.h): the split's own term.
  const check::LseReport lr = check::check_lse(lse_got, lse_want, split_layout, base.partial_sum_rounding);
  r.lses.pass = lr.pass();
  r.lses.worst_ratio = lr.worst_ratio;
  r.lses.detail = fmt::format("{} rows of another class, worst {:.1f} units of 2^-23 (|lse| + 1) (allowed {:.1f} there)",
                              lr.class_mismatches, lr.worst_units, lr.worst_allowed_units);
  if (!lr.pass() && lr.class_mismatches == 0)
    r.lses.detail += fmt::format(" at token {} split {} head {}", lr.worst_index / kNumHeads / S,
                                 lr.worst_index / kNumHeads % S, lr.worst_index % kNumHeads);

  // The merge: the kernel's output against the LSE merge (in double) of its own partials. Both
  // round a float32 sum to bf16: 1.5 ulps, plus the float32 error of the kernel's sum (S terms,
  // weights b^(lse_s - M) rounded with their exponent).
  int64_t merge_beyond = 0, merge_worst = -1;
  constexpr double u = 0x1p-24;
  for (int64_t t = 0; t < tokens; ++t)
    for (int h = 0; h < kNumHeads; ++h) {
      double big = -INFINITY;
      for (int64_t s = 0; s < S; ++s) {
        const float l = pl[static_cast<std::size_t>((t * S + s) * kNumHeads + h)];
        if (std::isfinite(l)) big = std::max<double>(big, l);
      }
      std::vector<double> w(static_cast<std::size_t>(S), 0.0);
      double w_sum = 0;
      for (int64_t s = 0; s < S; ++s) {
        const float l = pl[static_cast<std::size_t>((t * S + s) * kNumHeads + h)];
        w[static_cast<std::size_t>(s)] = std::isfinite(l) && std::isfinite(big) ? std::exp(l - big) : 0.0;
        w_sum += w[static_cast<std::size_t>(s)];
      }
      for (int d = 0; d < kVDim; ++d) {
        const std::size_t oi = static_cast<std::size_t>((t * kNumHeads + h) * kVDim + d);
        double acc = 0, size = 0;
        for (int64_t s = 0; s < S; ++s) {
          const double x = po[static_cast<std::size_t>(((t * S + s) * kNumHeads + h) * kVDim + d)];
          acc += w[static_cast<std::size_t>(s)] * (std::isfinite(x) ? x : 0.0);
          size += w[static_cast<std::size_t>(s)] * std::fabs(std::isfinite(x) ? x : 0.0);
        }
        const double want = w_sum > 0 ? acc / w_sum : 0.0;
        const double noise = w_sum > 0 ? (static_cast<double>(S) + 8 * (std::fabs(big) + 1)) * u * size / w_sum : 0.0;
        const double tol = 1.5 * check::bf16_ulp(want) + noise;
        const double err = std::fabs(static_cast<double>(output[oi]) - want);
        const bool bad = !(err <= tol) && !(w_sum == 0 && g.layout.visible_kv(t) == 0);
        if (bad) {
          ++merge_beyond;
          if (merge_worst < 0) merge_worst = static_cast<int64_t>(oi);
        }
      }
    }
  r.merge.pass = merge_beyond == 0;
  r.merge.detail = fmt::format("{} of {} output elements differ from the LSE merge of the kernel's own partials",
                               merge_beyond, output.size());
  if (merge_worst >= 0)
    r.merge.detail += fmt::format(" (first at token {} head {} dim {})", merge_worst / (kNumHeads * kVDim),
                                  merge_worst / kVDim % kNumHeads, merge_worst % kVDim);
  return r;
}

void write_maps(const std::filesystem::path& dir, const check::ErrorMaps& m, int64_t tokens) {
  std::filesystem::create_directories(dir);
  const auto png = [&](const char* name, std::span<const double> v, int64_t rows, int64_t cols) {
    const std::vector<unsigned char> bytes = check::heatmap_png(v, rows, cols);
    io::write_file_atomically(dir / name, std::as_bytes(std::span(bytes)));
  };
  png("output_token_head.png", m.token_head, tokens, kNumHeads);
  png("output_channel.png", m.channel, 1, kVDim);
  if (m.splits > 0) png("partials_token_split.png", m.token_split, tokens, m.splits);
}

int run_drift(const DriftOptions& o);

// --strategy mode: the strategy's run captured into files, then judged as any kernel's output,
// under the strategy's own recipe and the split plan it ran.
int run_strategy_drift(const DriftOptions& o) {
  if (!o.golden.empty() || !o.output.empty() || !o.recipe.empty() || o.schedule || !o.fields.empty())
    fail("drift --strategy takes its golden, output, recipe and schedule from the strategy's run: "
         "give --case (and --case-list), not GOLDEN OUTPUT --recipe --schedule");
  if (!o.case_name) fail("drift --strategy needs --case NAME (a case of --case-list)");
  const std::vector<const gpu::Strategy*> matches = gpu::match_strategies(*o.strategy);
  if (matches.size() != 1)
    fail(fmt::format("--strategy '{}' names {} strategies, drift takes one (see `mlacheck list`)",
                     *o.strategy, matches.size()));
  const std::string list = o.case_list.value_or(tier_case_list(CaseTier::standard));
  const ref::CaseSpec spec = select_cases(list, {*o.case_name}).front();
  gpu::Mutant fault = gpu::Mutant::none;
  if (o.mutant) {
    if (!gpu::mutants_built())
      fail("--mutant needs a build with -DMLACHECK_MUTANTS=ON (never the binary you gate with)");
    const auto all = gpu::mutants();
    const auto it = std::find_if(all.begin(), all.end(), [&](const gpu::MutantInfo& m) { return m.name == *o.mutant; });
    if (it == all.end()) fail(fmt::format("--mutant '{}' is no planted fault (gpu/mutants.h)", *o.mutant));
    fault = it->id;
  }
  gpu::set_active_mutant(fault);
  const CapturedRun captured = [&] {
    try {
      return capture_strategy(spec, *matches.front(), o.capture);
    } catch (...) {
      gpu::set_active_mutant(gpu::Mutant::none);
      throw;
    }
  }();
  gpu::set_active_mutant(gpu::Mutant::none);
  if (o.mutant) fmt::print("planted fault: {}\n", *o.mutant);
  fmt::print("captured {} on case {} ({}): {} and {}\n\n", matches.front()->name, spec.name, list,
             captured.golden.string(), captured.output.string());
  DriftOptions judged = o;
  judged.strategy.reset();
  judged.golden = captured.golden.string();
  judged.output = captured.output.string();
  judged.recipe = captured.recipe;
  judged.schedule = captured.schedule;
  judged.tc_qk_order = matches.front()->tc_qk_order;
  judged.tc_pv_order = matches.front()->tc_pv_order;
  const int code = run_drift(judged);
  if (code != kExitOk)
    fmt::print("repro: mlacheck drift --case {} --case-list {} --strategy {}\n", shell_quote(spec.name),
               shell_quote(list), shell_quote(matches.front()->name));
  return code;
}

int run_drift(const DriftOptions& o) {
  if (o.strategy) return run_strategy_drift(o);
  if (o.golden.empty() || o.output.empty() || o.recipe.empty())
    fail("drift needs GOLDEN OUTPUT --recipe R (a kernel's output file), or --case C --strategy S "
         "(one of this binary's GPU strategies)");
  require_distinct({{"--json", o.json.value_or("")}, {"--maps", o.maps.value_or("")}},
                   {{"GOLDEN", o.golden}, {"OUTPUT", o.output}});
  const problem::Recipe recipe = recipe_from_options(o.recipe, o.fields);
  const JudgedGolden g = read_judged_golden(o.golden, caches_for(recipe));
  const io::SafetensorsReader f(o.output);
  const int64_t tokens = g.inputs.batch.total_q();
  const auto got = read_output_tensor(f, o.tensor, tokens);
  if (!got) fail(fmt::format("{}: no tensor '{}'; name the output with --tensor", o.output, o.tensor));
  std::vector<float> output = *got;
  if (o.empty_rows == "any")  // rows with no key: whatever the kernel left there is not judged
    for (int64_t t = 0; t < tokens; ++t)
      if (g.layout.visible_kv(t) == 0)
        std::fill(output.begin() + t * kNumHeads * kVDim, output.begin() + (t + 1) * kNumHeads * kVDim, 0.0f);

  // The schedule: declared, or the one the kernel's partials imply (uniform over their count).
  Schedule schedule = Schedule::single();
  std::string schedule_note = "declared";
  if (o.schedule) {
    schedule = problem::parse_schedule(*o.schedule);
  } else if (f.contains(it::partial_out)) {
    const io::TensorInfo& info = f.info(std::string(it::partial_out));
    if (info.shape.size() == 4 && info.shape[1] > 1) {
      schedule = Schedule::uniform(static_cast<int>(info.shape[1]));
      schedule_note = fmt::format("assumed from '{}' ({} splits); declare --schedule for its tile and cut",
                                  it::partial_out, info.shape[1]);
    }
  } else {
    schedule_note = "none declared: single pass, schedule-free bound for the output";
  }
  schedule.check_fits(g.inputs.batch.kv_indptr());

  ref::EmulationOptions orders;
  orders.tc_qk_order = o.tc_qk_order;
  orders.tc_pv_order = o.tc_pv_order;
  ref::EmulationOptions eo = orders;
  eo.keep_f32_output = true;
  eo.capture_partials = true;
  eo.p_flips = true;
  eo.flip_noise = check::flip_noise(g.data, g.layout);
  ProgressPrinter progress(fmt::format("drift: emulate {} ({})", problem::spell(recipe), to_string(schedule)));
  const ref::EmulatedResult base = g.emulate(recipe, schedule, eo, &progress);
  const check::Waterfall w = waterfall(g, recipe, schedule, base, output, orders);

  std::vector<check::StageCheck> stages;
  stages.push_back(q_stage(g, recipe, f));
  PartialStages ps = partial_stages(g, recipe, schedule, base, f, output);
  stages.push_back(ps.partials);
  stages.push_back(ps.lses);
  stages.push_back(ps.merge);

  // The output, by the bound compare would use.
  check::GateOptions go;
  go.empty_rows = o.empty_rows == "any" ? check::EmptyRows::any : check::EmptyRows::zero;
  std::vector<uint16_t> emulated = base.out;
  if (o.schedule || schedule.split_k()) {
    go.kernel = check::kernel_bound(with_schedule(recipe, schedule), g.data, g.layout, base.p_flip);
  } else {
    ScheduleFree sf = schedule_free(g.inputs.batch, g.inputs.q, g.cache(recipe), recipe, g.data,
                                    g.layout);
    go.kernel = std::move(sf.bound);
    go.envelope = std::move(sf.envelope);
    emulated = std::move(sf.emulation.out);
  }
  const check::Bound kernel = *go.kernel;
  const check::Gate gate(recipe, g.data, g.layout, g.exact, emulated, std::move(go));
  const check::GateReport report = gate.judge(output, 3);
  check::StageCheck out_stage{"output", true, report.pass()};
  out_stage.detail = report.pass() ? fmt::format("within the {} and total bounds", kernel.name)
                                   : report.reasons().front();
  const std::vector<double> ratios = check::error_ratios(output, gate.emulated(), g.layout, kernel);
  for (double r : ratios) out_stage.worst_ratio = std::max(out_stage.worst_ratio, r);
  stages.push_back(out_stage);
  if (f.contains(it::lse)) {
    std::vector<float> lg = *read_lse_tensor(f, std::string(it::lse), tokens);
    if (o.empty_rows == "any")
      for (int64_t t = 0; t < tokens; ++t)
        if (g.layout.visible_kv(t) == 0)
          for (int h = 0; h < kNumHeads; ++h) lg[t * kNumHeads + h] = base.lse[t * kNumHeads + h];
    const check::LseReport lr = check::check_lse(lg, base.lse, g.layout, base.row_sum_rounding);
    stages.emplace_back("lse", true, lr.pass(),
                        fmt::format("{} rows of another class, worst {:.1f} units of 2^-23 (|lse| + 1) "
                                    "(allowed {:.1f} there)",
                                    lr.class_mismatches, lr.worst_units, lr.worst_allowed_units),
                        lr.worst_ratio);
  } else {
    stages.emplace_back("lse", false, true, fmt::format("no '{}' in the output file", it::lse));
  }

  check::ErrorMaps maps = check::maps_of(ratios, tokens);
  maps.token_split = ps.token_split;
  maps.splits = ps.splits;

  fmt::print("drift of {} against {} under {} (schedule {}: {})\n\n", o.output, o.golden,
             problem::spell(recipe), to_string(schedule), schedule_note);
  fmt::print("{}\n{}", check::format_waterfall(w), check::format_stages(stages));
  int64_t worst_token = 0;
  for (std::size_t i = 0; i < maps.token_head.size(); ++i)
    if (maps.token_head[i] > maps.token_head[static_cast<std::size_t>(worst_token)]) worst_token = static_cast<int64_t>(i);
  fmt::print("worst (token, head) of the output: token {} (request {}) head {}, {:.2f} x its bound\n",
             worst_token / kNumHeads, g.layout.request(worst_token / kNumHeads), worst_token % kNumHeads,
             maps.token_head.empty() ? 0.0 : maps.token_head[static_cast<std::size_t>(worst_token)]);
  if (o.maps) {
    write_maps(*o.maps, maps, tokens);
    fmt::print("maps: {}/output_token_head.png, output_channel.png{}\n", *o.maps,
               maps.splits > 0 ? ", partials_token_split.png" : "");
  }
  const auto first = check::first_failure(stages);
  if (first) {
    std::string repro = fmt::format("mlacheck drift {} {} --recipe {}", shell_quote(o.golden),
                                    shell_quote(o.output), shell_quote(problem::spell(recipe)));
    if (o.schedule) repro += " --schedule " + shell_quote(*o.schedule);
    fmt::print("repro: {}\n", repro);
  }
  if (o.json) {
    nlohmann::json st = nlohmann::json::array();
    for (const check::StageCheck& s : stages) st.push_back(check::to_json(s));
    write_json_report(*o.json, {{"golden", o.golden},
                                {"output", o.output},
                                {"recipe", problem::spell(recipe)},
                                {"schedule", to_string(schedule)},
                                {"schedule_note", schedule_note},
                                {"waterfall", check::to_json(w)},
                                {"stages", st},
                                {"first_failure", first ? nlohmann::json(stages[*first].name) : nlohmann::json(nullptr)},
                                {"maps", {{"token_head", maps.token_head},
                                          {"channel", maps.channel},
                                          {"token_split", maps.token_split},
                                          {"splits", maps.splits}}}});
  }
  return first ? kExitFail : kExitOk;
}

}  // namespace

void add_drift_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<DriftOptions>();
  CLI::App* sub = app.add_subcommand(
      "drift",
      "Where a kernel's error comes from: the recipe waterfall (each rounding made exact in turn), "
      "the kernel's intermediates (quantized Q, split partials and LSEs, merge, output) against "
      "the emulation's with the first stage out of its bound, and error maps (PNG, JSON)");
  sub->add_option("GOLDEN", o->golden, "golden safetensors file");
  sub->add_option("OUTPUT", o->output,
                  "the kernel's output file: out [+ lse, partial_out, partial_lse, q_fp8 + q_scale "
                  "or q_mxfp4 + q_mxfp4_scale]");
  sub->add_option("--recipe", o->recipe, "PRESET[:FIELD=VALUE,...] (required with GOLDEN OUTPUT)");
  sub->add_option("--strategy", o->strategy,
                  "instead of GOLDEN OUTPUT: run this GPU strategy (one registry name, `mlacheck "
                  "list`) on --case and judge what it computed, its intermediates read back from "
                  "its workspace");
  sub->add_option("--case", o->case_name, "with --strategy: the case to run");
  sub->add_option("--mutant", o->mutant,
                  "with --strategy, in a -DMLACHECK_MUTANTS=ON build: the planted fault the run "
                  "carries (gpu/mutants.h)");
  sub->add_option("--case-list", o->case_list,
                  "with --strategy: the list --case is in (default: the standard tier's)");
  sub->add_option("--capture", o->capture,
                  "with --strategy: the folder the golden and output files are written to")
      ->capture_default_str();
  add_recipe_field_options(sub, o->fields);
  sub->add_option("--schedule", o->schedule, "the kernel's schedule (as for compare)");
  sub->add_option("--tensor", o->tensor, "output tensor name")->capture_default_str();
  sub->add_option("--empty-rows", o->empty_rows, "rows with no key: zero or any (as for compare)")
      ->check(CLI::IsMember({"zero", "any"}))
      ->capture_default_str();
  sub->add_option("--maps", o->maps, "write the error maps as PNG heatmaps into this folder");
  sub->add_option("--json", o->json, "write the full report (maps included) as JSON");
  sub->callback([&run, o] { run = [o] { return run_drift(*o); }; });
}

}  // namespace mlacheck::cli
