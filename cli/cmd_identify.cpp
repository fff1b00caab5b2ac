// `mlacheck identify GOLDEN OUTPUT`: which (recipe, schedule) explains a kernel's output best. The
// candidates are emulated on the fly from the golden file's inputs, on a sample of its requests
// when the file is large, and ranked by their kernel error against the output:
//   1. the numerics families (Q format, KV format, where the KV scale goes) of every preset, each
//      with P in f32 / bf16 / f16 / fp8, single pass, a bf16 Q also pre-scaled (q=bf16-scaled):
//      which family the output belongs to;
//   2. for the best families, P format x exp base x a coarse schedule grid (single pass, 2..64
//      splits, tiles 32..128), then for the best of those every split count 1..64 x tiles 16..128.
// A candidate that is the kernel's own (recipe, schedule) reproduces the output up to float32
// noise, so its elements sit within the tight kernel bound; the others differ by P re-rounding.
// The verdict under the best candidate is the full gate on every request (as `compare --schedule`).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/gate.h"
#include "check/tolerance.h"
#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/empty_rows_hint.h"
#include "cli/option_checks.h"
#include "cli/golden_inputs.h"
#include "cli/json_report.h"
#include "cli/progress_printer.h"
#include "cli/shell_quote.h"
#include "check/ulp.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::cli {
namespace {

using problem::kNumHeads;
using problem::kVDim;
using problem::Schedule;

struct IdentifyOptions {
  std::string golden, output;
  std::string tensor = "out";
  std::size_t top = 5;
  int64_t sample_keys = 16384;  // keys (summed over queries) the search emulates per candidate
  std::string empty_rows = "zero";  // rows with no key in the verdict: zero or any (as compare)
  std::optional<std::string> json;
};

// Split counts and tiles of the search (the grid: splits 1..64, tiles 16..128).
constexpr int kMaxSearchSplits = 64;
constexpr std::array kTiles{0, 16, 32, 64, 128};
constexpr std::array kCoarseSplits{0, 2, 4, 8, 16, 32, 64};  // 0 = single pass
constexpr std::array kCoarseTiles{0, 32, 64, 128};
// Families whose single-pass error is within kFamilyRatio of the best are searched further (on
// the harness's data every Q format gives nearly the same output: a near-uniform softmax averages
// the same V rows whatever the scores), at most kFamiliesSearched of them.
constexpr double kFamilyRatio = 1.5;
constexpr std::size_t kFamiliesSearched = 6;

struct Candidate {
  problem::Recipe recipe;
  Schedule schedule;
  double rel_rms = 0;       // RMS(output - emulation) / RMS(emulation) over the sample
  int64_t beyond = 0;       // sample elements beyond the tight kernel bound of this schedule
  double worst_ratio = 0;   // max |error| / tolerance over the sample
};

// Fewer elements beyond the tight bound, then the smaller error, then the simpler spelling (a
// field override that changes nothing on this data, e.g. fold-f16 of MXFP4 values that f16 holds
// exactly, is not preferred).
bool better(const Candidate& a, const Candidate& b) {
  if (a.beyond != b.beyond) return a.beyond < b.beyond;
  if (a.rel_rms != b.rel_rms) return a.rel_rms < b.rel_rms;
  return problem::spell(a.recipe).size() < problem::spell(b.recipe).size();
}

bool smaller_error(const Candidate& a, const Candidate& b) {
  if (a.rel_rms != b.rel_rms) return a.rel_rms < b.rel_rms;
  return problem::spell(a.recipe).size() < problem::spell(b.recipe).size();
}

// Requests sampled so that about `keys` query-key pairs are emulated: every request when the
// batch is small, else evenly spaced ones (the longest request among them).
std::vector<int64_t> sample_requests(const problem::Batch& b, int64_t keys) {
  int64_t total = 0;
  for (int64_t r = 0; r < b.num_requests(); ++r) total += b.kv_len(r) * b.q_len(r);
  std::vector<int64_t> out;
  if (total <= keys) {
    for (int64_t r = 0; r < b.num_requests(); ++r) out.push_back(r);
    return out;
  }
  const double step = static_cast<double>(total) / static_cast<double>(keys);
  int64_t longest = 0;
  for (int64_t r = 0; r < b.num_requests(); ++r)
    if (b.kv_len(r) > b.kv_len(longest)) longest = r;
  int64_t taken = 0;
  out.push_back(longest);
  taken += b.kv_len(longest) * b.q_len(longest);
  for (double x = 0; x < static_cast<double>(b.num_requests()) && taken < keys; x += step) {
    const auto r = static_cast<int64_t>(x);
    if (r == longest) continue;
    out.push_back(r);
    taken += b.kv_len(r) * b.q_len(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class Search {
 public:
  Search(const JudgedGolden& g, const std::vector<float>& output, std::vector<int64_t> requests)
      : g_(g), output_(output), requests_(std::move(requests)) {
    const problem::Batch& b = g.inputs.batch;
    for (int64_t r : requests_)
      for (int64_t t = b.qo_indptr()[r]; t < b.qo_indptr()[r + 1]; ++t) tokens_.push_back(t);
  }

  Candidate score(const problem::Recipe& recipe, const Schedule& schedule) {
    ref::EmulationOptions o;
    o.requests = requests_;
    const ref::EmulatedResult e = g_.emulate(recipe, schedule, o);
    const check::Bound bound = check::kernel_bound(with_schedule(recipe, schedule), g_.data, g_.layout);
    Candidate c{recipe, schedule};
    double err = 0, ref = 0;
    for (int64_t t : tokens_)
      for (int64_t i = t * kNumHeads * kVDim; i < (t + 1) * kNumHeads * kVDim; ++i) {
        const auto k = static_cast<std::size_t>(i);
        const double r = quant::bf16_to_f32(e.out[k]), got = output_[k];
        if (!std::isfinite(got)) {
          ++c.beyond;
          continue;
        }
        const double d = std::fabs(got - r);
        err += d * d;
        ref += r * r;
        const double tol = bound.element_tolerance(t, static_cast<int>(i % kVDim), r, 0.0);
        if (d > tol) ++c.beyond;
        c.worst_ratio = std::max(c.worst_ratio, tol > 0 ? d / tol : (d > 0 ? 1e300 : 0.0));
      }
    c.rel_rms = ref > 0 ? std::sqrt(err / ref) : (err > 0 ? 1e300 : 0.0);
    ++emulations_;
    return c;
  }

  // The same softmax steps of every sampled request (split starts and tile starts; a tile as
  // long as its split is no tile) give the same bits: a schedule seen before is skipped.
  bool seen(const problem::Recipe& r, const Schedule& s) {
    std::string key = fmt::format("{}|", problem::spell(r));
    const problem::BatchSplits splits(s, g_.inputs.batch.kv_indptr());
    for (int64_t q : requests_) {
      for (const problem::KeyRange& k : splits.ranges(q)) {
        if (k.end <= k.begin) continue;
        key += fmt::format("s{},", k.begin);
        if (s.softmax_tile > 0)
          for (int64_t t = k.begin + s.softmax_tile; t < k.end; t += s.softmax_tile)
            key += fmt::format("{},", t);
      }
      key += ';';
    }
    return !keys_.insert(key).second;
  }
  int64_t emulations() const { return emulations_; }
  const std::vector<int64_t>& requests() const { return requests_; }

 private:
  const JudgedGolden& g_;
  const std::vector<float>& output_;
  std::vector<int64_t> requests_;
  std::vector<int64_t> tokens_;
  std::set<std::string> keys_;
  int64_t emulations_ = 0;
};

Schedule schedule_of(int splits, int tile) {
  return splits == 0 ? Schedule::single(tile) : Schedule::uniform(splits, tile);
}

// Every numerics family of the presets: (Q, KV, scale placement), with each P format and, where
// fp8 codes multiply fp8 codes, either way of summing them (fp8-acc).
std::vector<problem::Recipe> family_candidates(const JudgedGolden& g) {
  std::vector<problem::Recipe> out;
  std::set<std::string> spelled;
  for (const problem::Recipe& preset : problem::recipes()) {
    if (preset.kv == problem::KvFormat::fp8 && !g.inputs.fp8) continue;
    if (preset.kv == problem::KvFormat::mxfp4 && !g.inputs.mxfp4) continue;
    std::vector<std::string_view> scales{"scores"};
    if (preset.kv != problem::KvFormat::bf16) scales = {"scores", "fold-bf16", "fold-f16"};
    // A bf16 Q may also be pre-scaled in bf16 before Q·Kᵀ (Triton kernels that fold the softmax
    // scale into q: recipe field q=bf16-scaled).
    std::vector<std::string_view> qs{problem::to_string(preset.q)};
    if (preset.q == problem::QFormat::bf16) qs.push_back(problem::to_string(problem::QFormat::bf16_scaled));
    for (std::string_view q : qs)
      for (std::string_view scale : scales)
        for (std::string_view p : {"f32", "bf16", "f16", "fp8"}) {
          problem::Recipe r = preset;
          problem::set_recipe_field(r, "q", q);
          problem::set_recipe_field(r, "kv-scale", scale);
          problem::set_recipe_field(r, "p", p);
          if (spelled.insert(problem::spell(r)).second) out.push_back(r);
          // fp8 x fp8 products may also be summed as an sm_90 tensor core sums them.
          if (problem::fp8_products_qk(r) || problem::fp8_products_pv(r))
            for (std::string_view acc : {"tc64", "tc"}) {
              problem::set_recipe_field(r, "fp8-acc", acc);
              if (spelled.insert(problem::spell(r)).second) out.push_back(r);
            }
        }
  }
  return out;
}

std::string family_of(const problem::Recipe& r) {
  return fmt::format("q={},kv={},kv-scale={}", problem::to_string(r.q), problem::to_string(r.kv),
                     problem::to_string(r.kv_scale));
}

std::string describe(const Candidate& c) {
  const problem::Recipe& r = c.recipe;
  std::string cut = c.schedule.kind == Schedule::Kind::single
                        ? std::string("a single pass")
                        : fmt::format("{} splits", c.schedule.count);
  return fmt::format("{} with {} P, softmax in base {}, {}, {}", problem::spell(r),
                     problem::to_string(r.p), problem::to_string(r.base), cut,
                     c.schedule.softmax_tile > 0
                         ? fmt::format("{}-key tiles", c.schedule.softmax_tile)
                         : std::string("one softmax step per split"));
}

int run_identify(const IdentifyOptions& o) {
  require_distinct({{"--json", o.json.value_or("")}}, {{"GOLDEN", o.golden}, {"OUTPUT", o.output}});
  const JudgedGolden g = read_judged_golden(o.golden);
  const io::SafetensorsReader out_file(o.output);
  const auto got = read_output_tensor(out_file, o.tensor, g.inputs.batch.total_q());
  if (!got)
    throw std::invalid_argument(fmt::format("{}: no tensor '{}'; name the output with --tensor",
                                            o.output, o.tensor));
  Search search(g, *got, sample_requests(g.inputs.batch, o.sample_keys));

  // 1. Families, single pass, each P format.
  std::vector<Candidate> stage1;
  {
    ProgressPrinter progress("identify: recipe families");
    const std::vector<problem::Recipe> fam = family_candidates(g);
    for (std::size_t i = 0; i < fam.size(); ++i) {
      stage1.push_back(search.score(fam[i], Schedule::single()));
      progress.update(static_cast<int64_t>(i + 1), static_cast<int64_t>(fam.size()));
    }
  }
  std::sort(stage1.begin(), stage1.end(), smaller_error);
  std::vector<std::string> families;
  for (const Candidate& c : stage1)
    if (std::find(families.begin(), families.end(), family_of(c.recipe)) == families.end() &&
        families.size() < kFamiliesSearched &&
        (families.empty() || c.rel_rms <= kFamilyRatio * stage1.front().rel_rms))
      families.push_back(family_of(c.recipe));

  // 2. P x base x schedules within the best families.
  std::vector<Candidate> all = stage1;
  for (const std::string& family : families) {
    const problem::Recipe base = std::find_if(stage1.begin(), stage1.end(), [&](const Candidate& c) {
                                   return family_of(c.recipe) == family;
                                 })->recipe;
    std::vector<Candidate> coarse;
    ProgressPrinter progress("identify: schedules of " + family);
    const int64_t coarse_total = 8 * static_cast<int64_t>(kCoarseSplits.size() * kCoarseTiles.size());
    int64_t done = 0;
    // Coarse: each P format in either base over a coarse schedule grid. Both bases here, not only
    // in the fine step: on peaked data (a one-hot softmax) the base moves the output as much as the
    // P format does, and a P chosen in the wrong base sent the fine step astray (a bf16-P, base-2
    // kernel named as fp8 P in base 2 on small_peaked_q4).
    for (std::string_view p : {"f32", "bf16", "f16", "fp8"})
      for (std::string_view b : {"e", "2"}) {
        problem::Recipe r = base;
        problem::set_recipe_field(r, "p", p);
        problem::set_recipe_field(r, "base", b);
        if (!problem::fp8_products_qk(r) && !problem::fp8_products_pv(r))
          r.fp8_acc = problem::Fp8Accumulation::f32;  // no fp8 x fp8 product left to sum
        for (int splits : kCoarseSplits)
          for (int tile : kCoarseTiles) {
            progress.update(++done, coarse_total);
            const Schedule s = schedule_of(splits, tile);
            if (search.seen(r, s)) continue;
            coarse.push_back(search.score(r, s));
          }
      }
    std::sort(coarse.begin(), coarse.end(), better);
    all.insert(all.end(), coarse.begin(), coarse.end());
    // Fine: every split count and tile for the best P of the coarse grid, in either base.
    const problem::Recipe best_p = coarse.front().recipe;
    for (std::string_view b : {"e", "2"}) {
      problem::Recipe r = best_p;
      problem::set_recipe_field(r, "base", b);
      for (int splits = 0; splits <= kMaxSearchSplits; ++splits)
        for (int tile : kTiles) {
          const Schedule s = schedule_of(splits, tile);
          if (search.seen(r, s)) continue;
          all.push_back(search.score(r, s));
        }
    }
  }
  std::sort(all.begin(), all.end(), better);

  fmt::print("identify {} against {} ({} of {} requests sampled, {} emulations)\n\n", o.output,
             o.golden, search.requests().size(), g.inputs.batch.num_requests(),
             search.emulations());
  fmt::print("  {:<4} {:<44} {:<18} {:>12} {:>10} {:>12}\n", "rank", "recipe", "schedule",
             "rel RMS err", "beyond", "worst/tol");
  for (std::size_t i = 0; i < std::min(o.top, all.size()); ++i)
    fmt::print("  {:<4} {:<44} {:<18} {:>12.3e} {:>10} {:>12.3f}\n", i + 1,
               problem::spell(all[i].recipe), to_string(all[i].schedule), all[i].rel_rms,
               all[i].beyond, all[i].worst_ratio);
  const Candidate& best = all.front();
  fmt::print("\nthis output behaves like {}\n", describe(best));

  // The verdict under the best candidate, on every request (compare --schedule).
  const ref::EmulatedResult e = g.emulate(best.recipe, best.schedule);
  check::GateOptions go;
  go.kernel = check::kernel_bound(with_schedule(best.recipe, best.schedule), g.data, g.layout);
  go.empty_rows = o.empty_rows == "any" ? check::EmptyRows::any : check::EmptyRows::zero;
  const check::GateReport report =
      check::Gate(best.recipe, g.data, g.layout, g.exact, e.out, std::move(go)).judge(*got, 3);
  fmt::print("verdict under it (every request, tight bound): {}\n", report.pass() ? "PASS" : "FAIL");
  for (const std::string& r : report.reasons()) fmt::print("  reason: {}\n", r);
  if (!report.pass() && o.empty_rows == "zero")
    if (const auto hint = empty_rows_hint(*got, g.layout)) fmt::print("  {}\n", *hint);
  const std::string command =
      fmt::format("mlacheck compare {} {} --recipe {} --schedule {}{}", shell_quote(o.golden),
                  shell_quote(o.output), shell_quote(problem::spell(best.recipe)),
                  shell_quote(to_string(best.schedule)), o.empty_rows == "any" ? " --empty-rows any" : "");
  fmt::print("check it: {}\n", command);

  if (o.json) {
    nlohmann::json ranked = nlohmann::json::array();
    for (std::size_t i = 0; i < std::min(o.top, all.size()); ++i)
      ranked.push_back({{"recipe", problem::spell(all[i].recipe)},
                        {"schedule", to_string(all[i].schedule)},
                        {"rel_rms_error", all[i].rel_rms},
                        {"elements_beyond_tight_bound", all[i].beyond},
                        {"worst_over_tolerance", all[i].worst_ratio}});
    write_json_report(*o.json, {{"golden", o.golden},
                                {"output", o.output},
                                {"sampled_requests", search.requests()},
                                {"emulations", search.emulations()},
                                {"ranked", ranked},
                                {"best", describe(best)},
                                {"verdict_under_best", report.pass() ? "pass" : "fail"},
                                {"compare_command", command}});
  }
  return kExitOk;
}

}  // namespace

void add_identify_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<IdentifyOptions>();
  CLI::App* sub = app.add_subcommand(
      "identify",
      "Rank (recipe, schedule) candidates by how well they explain a kernel's output: presets x "
      "P formats x exp base x split counts 1..64 x tiles 16..128, emulated on the fly");
  sub->add_option("GOLDEN", o->golden, "golden safetensors file")->required();
  sub->add_option("OUTPUT", o->output, "safetensors file with the kernel's output")->required();
  sub->add_option("--tensor", o->tensor, "output tensor name")->capture_default_str();
  sub->add_option("--top", o->top, "how many candidates to print")->check(unsigned_digits())->capture_default_str();
  sub->add_option("--sample-keys", o->sample_keys,
                  "query-key pairs emulated per candidate (requests are sampled beyond this)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--empty-rows", o->empty_rows,
                  "rows with no key in the verdict: zero (must be 0) or any (not judged), as for compare")
      ->check(CLI::IsMember({"zero", "any"}))
      ->capture_default_str();
  sub->add_option("--json", o->json, "also write the ranking as JSON");
  sub->callback([&run, o] { run = [o] { return run_identify(*o); }; });
}

}  // namespace mlacheck::cli
