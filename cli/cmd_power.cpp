// `mlacheck power`: the gate's power on generated cases: known-wrong outputs (cli/wrong_answers.h)
// scored against the gate and against the harness's own check (rtol = atol = 1e-2, NUMERICS
// §6.4), per recipe. Exit 1 when the gate accepts a wrong answer or rejects the recipe's own
// emulated output (with --wrong-answers recipe, an accepted fault is a note: it may lie within what
// correct kernels differ by); a harness check that accepts wrong answers is the point of the table.
// Each answer also carries the LSE its kernel would write, judged as `compare` judges a saved LSE;
// the table says where the LSE alone rejects (a kernel that writes none would pass there).
#include <array>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/data_scale.h"
#include "check/gate.h"
#include "check/power.h"
#include "check/report_json.h"
#include "check/schedule_envelope.h"
#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/json_report.h"
#include "cli/golden_case.h"
#include "cli/golden_inputs.h"
#include "cli/wrong_answers.h"
#include "io/golden.h"
#include "problem/schedule.h"
#include "quant/bf16.h"
#include "ref/case_list.h"
#include "ref/decode_emulated.h"

namespace mlacheck::cli {
namespace {

// A schedule no preset uses: split count prime, softmax tile smaller than every preset's.
constexpr int kOddSplits = 7;
constexpr int kOddTile = 16;

struct PowerOptions {
  std::string case_list = "data/cases/default.txt";
  std::vector<std::string> case_names;
  std::string recipes = "all";
  std::optional<std::string> json;
  WrongAnswerNumerics numerics = WrongAnswerNumerics::exact;
};

// "declared / schedule-free / harness": the gate with the kernel bound of a declared schedule, the
// gate with the schedule-free kernel bound, the harness's check. rej: the output is rejected; lse:
// only the answer's LSE is (a kernel that writes no LSE passes); acc: accepted (ACC: a wrong answer).
// A wrong answer with no visible effect on this data (PowerRow::visible) is "-" throughout.
std::string cell(const check::PowerRow& declared, const check::PowerRow* free) {
  if (!declared.visible()) return "(no effect)";
  const auto v = [](const check::PowerRow& row) {
    if (row.gate_rejects) return "rej";
    if (row.rejected_by_lse_only()) return "lse";
    return row.expected_reject ? "ACC" : "acc";
  };
  return fmt::format("{} / {} / {}", v(declared), free ? v(*free) : "-",
                     declared.harness_rejects ? "rej" : "acc");
}

// Schedules at the ends of what a kernel may do: the most splits the merge takes
// (problem::kMaxPlanSplits = 256; almost every P rounded against another maximum than the single
// pass's), and an online softmax one key at a time (every key before the row max rescaled after
// it was rounded).
constexpr std::array kExtremeSchedules{"splits=256", "single,tile=1"};

// The controls of the schedule-free gate: the same recipe emulated with other schedules (the
// preset's split count, an odd split count with a small softmax tile, the extremes above), all
// correct.
std::vector<check::WrongAnswer> other_schedules(const GoldenCase& c, const problem::Recipe& r,
                                                const ref::EmulatedResult& preset) {
  std::vector<check::WrongAnswer> out;
  out.push_back({"preset-schedule", fmt::format("the emulation with {} splits, tile {} (control)",
                                                r.num_splits, r.softmax_tile),
                 widen_bf16(preset.out), true, {}, preset.lse});
  problem::KvCache cache = golden_cache(c, r);
  const ref::EmulatedResult odd = ref::decode_emulated(
      c.batch, c.q, cache, r, problem::Schedule::uniform(kOddSplits, kOddTile));
  out.push_back({"odd-schedule",
                 fmt::format("the emulation with {} splits, tile {} (control)", kOddSplits, kOddTile),
                 widen_bf16(odd.out), true, {}, odd.lse});
  for (const char* spelling : kExtremeSchedules) {
    const ref::EmulatedResult e =
        ref::decode_emulated(c.batch, c.q, cache, r, problem::parse_schedule(spelling));
    out.push_back({spelling, fmt::format("the emulation with schedule {} (control)", spelling),
                   widen_bf16(e.out), true, {}, e.lse});
  }
  return out;
}

int run_power(const PowerOptions& o) {
  require_distinct({{"--json", o.json.value_or("")}}, {{"--case-list", o.case_list}});
  const std::vector<problem::Recipe> recipes = parse_recipes(o.recipes);
  std::vector<ref::CaseSpec> cases = ref::read_case_list(o.case_list);
  if (!o.case_names.empty())
    std::erase_if(cases, [&](const ref::CaseSpec& s) {
      return std::find(o.case_names.begin(), o.case_names.end(), s.name) == o.case_names.end();
    });
  if (cases.empty()) throw std::invalid_argument("no case selected from " + o.case_list);

  const std::vector<std::string> columns{"emulated", "zeros", "drop-token", "skip-rope", "forget-kv-scale",
                                         "v-wrong-dims", "drop-split"};
  fmt::print("Each cell: gate with a declared schedule / gate with no schedule declared (schedule-free\n"
             "kernel bound) / the harness check (rtol = atol = 1e-2); rej = rejects the output, lse =\n"
             "rejects only the LSE the kernel writes beside it (a kernel that writes no LSE passes), acc =\n"
             "accepts, ACC = accepts a wrong answer. 'emulated' is the control (the recipe's own emulated\n"
             "output: all must accept it; for the schedule-free gate, the recipe emulated with its preset\n"
             "schedule, with {} splits x {}-key tiles, with {} and with {} are its controls); every other\n"
             "column is a known-wrong output.\n\n",
             kOddSplits, kOddTile, kExtremeSchedules[0], kExtremeSchedules[1]);
  std::string header = fmt::format("| {:<14} | {:<11} |", "case", "recipe");
  std::string rule = "|----------------|-------------|";
  for (const std::string& c : columns) {
    header += fmt::format(" {:<15} |", c);
    rule += "-----------------|";
  }
  fmt::print("{}\n{}\n", header, rule);

  nlohmann::json report = nlohmann::json::array();
  int failures = 0;
  int free_misses = 0;
  int declared_misses = 0;  // --wrong-answers recipe: faults within the declared kernel bound
  int indistinguishable_misses = 0;  // moved less than a correct control
  int lse_only = 0;                  // schedule-free: rejected through the LSE alone
  for (const ref::CaseSpec& spec : cases) {
    require_memory(golden_case_bytes(case_size(spec), recipes.size()), "power case " + spec.name);
    GoldenCase c = generate_case(spec);
    complete(c, recipes);
    const check::DataScale data = check::data_scale(c.q, c.kv, c.batch);
    const check::OutputLayout layout = check::OutputLayout::from_batch(c.batch);
    WrongAnswers wrong(c, o.numerics);
    for (const problem::Recipe& r : recipes) {
      const std::span<const uint16_t> emulated = emulated_output(c, r);
      // The declared gate: the recipe's own schedule, P code flips measured in it.
      ref::EmulationOptions flips;
      flips.p_flips = true;
      flips.flip_noise = check::flip_noise(data, layout);
      const ref::EmulatedResult declared = ref::decode_emulated(
          c.batch, c.q, golden_cache(c, r), r,
          problem::Schedule::from_plan(problem::SplitPlan::uniform(r.num_splits), r.softmax_tile),
          flips);
      check::GateOptions declared_options;
      declared_options.kernel = check::kernel_bound(r, data, layout, declared.p_flip);
      const check::Gate gate(r, data, layout, c.exact->out, emulated, std::move(declared_options));
      const std::vector<check::WrongAnswer> answers = wrong.for_recipe(r);
      const check::PowerReport power = check::score_power(
          gate, answers, check::LseReference{declared.lse, declared.row_sum_rounding});

      // The same answers against the gate with no schedule declared, plus its controls.
      ScheduleFree single = schedule_free(c.batch, c.q, golden_cache(c, r), r, data, layout);
      check::GateOptions free_options;
      free_options.kernel = std::move(single.bound);
      free_options.envelope = std::move(single.envelope);
      const check::Gate free_gate(r, data, layout, c.exact->out, single.emulation.out,
                                  std::move(free_options));
      std::vector<check::WrongAnswer> free_answers = other_schedules(c, r, emulated_result(c, r));
      free_answers.insert(free_answers.end(), answers.begin(), answers.end());
      const check::PowerReport free_power = check::score_power(
          free_gate, free_answers,
          check::LseReference{single.emulation.lse, single.emulation.row_sum_rounding});

      std::string line = fmt::format("| {:<14} | {:<11} |", spec.name, r.name);
      const auto find = [](const check::PowerReport& p, const std::string& col) {
        auto it = std::find_if(p.rows.begin(), p.rows.end(), [&](const check::PowerRow& row) {
          return row.name == col || (col == "emulated" && row.name == "emulated");
        });
        return it == p.rows.end() ? nullptr : &*it;
      };
      for (const std::string& col : columns) {
        const check::PowerRow* d = find(power, col);
        line += fmt::format(" {:<15} |", d ? cell(*d, find(free_power, col)) : "n/a");
      }
      fmt::print("{}\n", line);
      std::fflush(stdout);
      // A fault planted in the recipe's own numerics may move the output by no more than two
      // correct kernels of the same schedule differ by (P codes flipping with float32 noise, the
      // summation order): accepting it is a limit of any gate, reported with its numbers; with
      // fp64 answers, and for every control, a wrong verdict is a failure.
      for (const check::PowerRow& row : power.rows) {
        if (row.ok()) continue;
        if (row.expected_reject && o.numerics == WrongAnswerNumerics::recipe) {
          ++declared_misses;
          fmt::print(stderr,
                     "mlacheck power: note: {} {}: with the schedule declared, '{}' made in the "
                     "recipe's numerics is within the kernel bound: it moves the output by {:.2e} "
                     "(relative RMS vs the emulation), at most {:.1f} bf16 ulps of an element\n",
                     spec.name, r.name, row.name, row.kernel_rel_rms, row.effect_ulps);
          continue;
        }
        fmt::print(stderr, "mlacheck power: {} {} (declared schedule): {}\n", spec.name, r.name,
                   row.expected_reject
                       ? fmt::format("the gate cannot reject '{}' ({})", row.name, row.what)
                       : fmt::format("the gate rejects the control '{}' ({}): a bound is too tight",
                                     row.name, row.what));
        ++failures;
      }
      // Without a declared schedule a false alarm is a failure; a visible wrong answer that is
      // accepted is a limit of what any schedule-free bound can see, reported with its numbers.
      double control_rms = 0;
      std::string control_name;
      for (const check::PowerRow& row : free_power.rows)
        if (!row.expected_reject && row.kernel_rel_rms > control_rms)
          control_rms = row.kernel_rel_rms, control_name = row.name;
      for (const check::PowerRow& row : free_power.rows) {
        if (row.visible() && row.expected_reject && row.rejected_by_lse_only()) {
          ++lse_only;
          fmt::print(stderr,
                     "mlacheck power: note: {} {}: without a declared schedule '{}' is rejected by "
                     "its LSE alone ({:.3g} x the LSE's bound); its output, {:.2f} x as far from "
                     "the single pass as the farthest correct control ('{}'), passes\n",
                     spec.name, r.name, row.name, row.lse_worst_ratio,
                     control_rms > 0 ? row.kernel_rel_rms / control_rms : 0.0, control_name);
        }
        if (row.ok()) continue;
        if (!row.expected_reject) {
          fmt::print(stderr, "mlacheck power: {} {} (schedule-free): rejects the correct '{}' ({})\n",
                     spec.name, r.name, row.name, row.what);
          ++failures;
          continue;
        }
        ++free_misses;
        const bool indistinguishable = row.kernel_rel_rms <= control_rms;
        indistinguishable_misses += indistinguishable ? 1 : 0;
        fmt::print(stderr,
                   "mlacheck power: note: {} {}: without a declared schedule '{}' is not caught: "
                   "it moves the output by {:.2e} (relative RMS vs the single-pass emulation), "
                   "{:.2f} x as far as the farthest correct control ('{}', {:.2e}): {}{}; declare "
                   "--schedule to catch it\n",
                   spec.name, r.name, row.name, row.kernel_rel_rms,
                   control_rms > 0 ? row.kernel_rel_rms / control_rms : 0.0, control_name,
                   control_rms,
                   indistinguishable
                       ? "closer than that correct kernel, so no schedule-free test can reject it "
                         "without rejecting a correct one"
                       : fmt::format("within the element-wise bound (the worst case of {} P "
                                     "re-rounding) and the envelope of correct schedules ({} x "
                                     "the farthest of those emulated + floor)",
                                     problem::to_string(r.p), check::kEnvelopeFactor),
                   row.lse_rejects ? fmt::format("; its LSE is at {:.2g} of the LSE's bound (which "
                                                 "admits a kernel that sums l from its rounded P)",
                                                 row.lse_worst_ratio)
                                   : std::string());
      }
      report.push_back({{"case", spec.name},
                        {"recipe", r.name},
                        {"power", check::to_json(power)},
                        {"power_schedule_free", check::to_json(free_power)}});
    }
  }
  if (o.json) {
    write_json_report(*o.json, report);
  }
  fmt::print("\n{}\n", failures == 0 ? "The gate rejects every wrong answer and accepts every control."
                                     : fmt::format("{} verdicts of the gate are wrong (see stderr).", failures));
  if (declared_misses > 0)
    fmt::print("With the schedule declared, {} visible faults made in the recipe's numerics are within "
               "the kernel bound (notes on stderr).\n",
               declared_misses);
  if (free_misses > 0)
    fmt::print("Without a declared schedule, {} visible wrong answers pass the schedule-free bound "
               "and their LSE, {} of them closer to the emulation than a correct control (notes on "
               "stderr).\n",
               free_misses, indistinguishable_misses);
  if (lse_only > 0)
    fmt::print("Without a declared schedule, {} visible wrong answers are rejected by their LSE alone: "
               "a kernel that writes no LSE would pass them (notes on stderr).\n",
               lse_only);
  return failures == 0 ? kExitOk : kExitFail;
}

}  // namespace

void add_power_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<PowerOptions>();
  CLI::App* sub = app.add_subcommand(
      "power", "Score known-wrong outputs (zeros, a dropped token, skipped rope dims, a forgotten KV "
               "scale, V from the wrong dims, a dropped split) against the gate and the harness check");
  sub->add_option("--case-list", o->case_list, "case list")->capture_default_str();
  sub->add_option("--cases", o->case_names, "only these case names")->delimiter(',');
  sub->add_option("--recipes", o->recipes, "comma-separated recipes, or all")->capture_default_str();
  sub->add_option("--json", o->json, "write the full report as JSON");
  sub->add_option("--wrong-answers", o->numerics,
                  "how drop-token, skip-rope and drop-split are computed: exact (fp64, bf16 inputs) "
                  "or recipe (the recipe's emulation with the fault planted: a kernel of the recipe "
                  "with that bug)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, WrongAnswerNumerics>{{"exact", WrongAnswerNumerics::exact},
                                                      {"recipe", WrongAnswerNumerics::recipe}}))
      ->capture_default_str();
  sub->callback([&run, o] { run = [o] { return run_power(*o); }; });
}

}  // namespace mlacheck::cli
