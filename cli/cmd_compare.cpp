// `mlacheck compare GOLDEN OUTPUT --recipe R [--schedule S] ...`: judges a kernel's output,
// written anywhere (a Triton kernel under PyTorch saves it with `safetensors`), against a golden
// file, with the gate of check/ (total error vs out_exact, kernel error vs the recipe's
// emulation) and the harness's own check beside it. The recipe is any preset with field
// overrides (problem/recipe.h); the emulation is the stored out_<preset> when it is exactly the
// declared (recipe, schedule), otherwise computed on the fly from the golden file's inputs. With
// no --schedule the kernel error is judged by the schedule-free bound (check/tolerance.h).
// Exit 0 pass, 1 fail, 2 usage or input error.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/gate.h"
#include "check/lse.h"
#include "check/power.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/empty_rows_hint.h"
#include "cli/tensor_core_sums_hint.h"
#include "cli/option_checks.h"
#include "cli/golden_inputs.h"
#include "cli/json_report.h"
#include "cli/progress_printer.h"
#include "cli/shell_quote.h"
#include "io/golden.h"
#include "io/safetensors.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "quant/bf16.h"

namespace mlacheck::cli {
namespace {

struct CompareOptions {
  std::string golden, output, recipe;
  std::vector<std::pair<std::string, std::string>> fields;  // --q, --p, ... in order
  std::optional<std::string> schedule;
  std::string tensor = "out";
  bool tensor_given = false;
  std::string lse_tensor = "lse";
  std::string empty_rows = "zero";
  std::optional<std::string> json;
  std::size_t worst = 10;
};

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

// What the golden file says about itself (io/golden.h metadata keys), for the report's header.
std::string metadata_line(const std::map<std::string, std::string>& m) {
  std::string s;
  namespace gm = io::golden::meta;
  for (const std::string_view key : {gm::schema, gm::case_spec, gm::seed, gm::profile, gm::batch,
                                     gm::kv_len, gm::q_len, gm::page_size, gm::recipe_schedules}) {
    const auto it = m.find(std::string(key));
    if (it != m.end()) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", key, it->second);
  }
  return s.empty() ? "no metadata" : s;
}

// The command that reproduces this comparison (printed on failure).
std::string repro_line(const CompareOptions& o, const problem::Recipe& r) {
  std::string s = fmt::format("mlacheck compare {} {} --recipe {}", shell_quote(o.golden),
                              shell_quote(o.output), shell_quote(problem::spell(r)));
  if (o.schedule) s += " --schedule " + shell_quote(*o.schedule);
  if (o.tensor_given) s += " --tensor " + shell_quote(o.tensor);
  if (o.empty_rows != "zero") s += " --empty-rows " + o.empty_rows;
  return s;
}

int run_compare(const CompareOptions& o) {
  require_distinct({{"--json", o.json.value_or("")}}, {{"GOLDEN", o.golden}, {"OUTPUT", o.output}});
  const problem::Recipe recipe = recipe_from_options(o.recipe, o.fields);
  const check::EmptyRows empty_rows =
      o.empty_rows == "any" ? check::EmptyRows::any : check::EmptyRows::zero;
  std::optional<problem::Schedule> schedule;
  if (o.schedule) schedule = problem::parse_schedule(*o.schedule);

  const JudgedGolden g = read_judged_golden(o.golden, caches_for(recipe));
  const io::SafetensorsReader out_file(o.output);
  std::string output_name = o.tensor;
  if (!out_file.contains(o.tensor)) {
    const auto names = out_file.names();
    if (names.size() == 1 && !o.tensor_given) {
      output_name = names.front();
      fmt::print(stderr,
                 "mlacheck compare: note: {} has no tensor '{}'; using its only tensor '{}'\n",
                 o.output, o.tensor, output_name);
    } else {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      fail(fmt::format("{}: no tensor '{}' (it holds: {}); name the output with --tensor",
                       o.output, o.tensor, list.empty() ? "nothing" : list));
    }
  }
  const std::vector<float> output =
      *read_output_tensor(out_file, output_name, g.inputs.batch.total_q());

  // The emulation and the kernel bound that judges against it.
  check::GateOptions options;
  options.empty_rows = empty_rows;
  std::vector<uint16_t> emulated;
  std::vector<float> emulated_lse;
  std::vector<float> sum_rounding;  // the LSE's rounded-P row sum term (check/lse.h)
  std::string emulation_source;
  if (schedule) {
    schedule->check_fits(g.inputs.batch.kv_indptr());
    // The declared schedule replayed, with the P codes that may flip in it measured.
    ProgressPrinter progress(fmt::format("emulate {} ({})", problem::spell(recipe),
                                         to_string(*schedule)));
    ref::EmulationOptions eo;
    eo.p_flips = true;
    eo.flip_noise = check::flip_noise(g.data, g.layout);
    ref::EmulatedResult e = g.emulate(recipe, *schedule, eo, &progress);
    options.kernel =
        check::kernel_bound(with_schedule(recipe, *schedule), g.data, g.layout, e.p_flip);
    emulation_source = fmt::format("emulated on the fly ({})", to_string(*schedule));
    // The golden's stored emulation of the same (recipe, schedule) must be these bits: a file made
    // by another mlacheck version (or edited) says so here.
    if (const auto stored = g.stored_output(recipe, *schedule)) {
      emulation_source += *stored == e.out
                              ? fmt::format("; equal bit for bit to the stored out_{}", recipe.name)
                              : fmt::format("; WARNING: differs from the stored out_{} (another "
                                            "generator version?)",
                                            recipe.name);
    }
    emulated = std::move(e.out);
    emulated_lse = std::move(e.lse);
    sum_rounding = std::move(e.row_sum_rounding);
  } else {
    ProgressPrinter progress(fmt::format("emulate {} (single pass + weight sensitivity)",
                                         problem::spell(recipe)));
    ScheduleFree f = schedule_free(g.inputs.batch, g.inputs.q, g.cache(recipe), recipe, g.data,
                                   g.layout, &progress);
    options.kernel = std::move(f.bound);
    options.envelope = std::move(f.envelope);
    emulated = std::move(f.emulation.out);
    emulated_lse = std::move(f.emulation.lse);
    sum_rounding = std::move(f.emulation.row_sum_rounding);
    emulation_source = "emulated on the fly (single pass; no --schedule: schedule-free bound and envelope)";
  }
  const check::Gate gate(recipe, g.data, g.layout, g.exact, emulated, std::move(options));
  const check::GateReport report = gate.judge(output, o.worst);
  const std::vector<check::WrongAnswer> wrong{check::all_zeros(gate.layout())};
  const check::PowerReport power = check::score_power(gate, wrong);

  // The kernel's LSE, where it saved one, against the emulation's: any schedule gives the same
  // LSE up to float32 rounding where the kernel sums the unrounded P, and within the row-sum
  // rounding term (check/lse.h) where it sums the rounded P it multiplies V by.
  std::optional<check::LseReport> lse;
  if (emulated_lse.empty() && out_file.contains(o.lse_tensor)) {
    ref::EmulatedResult e = g.emulate(recipe, problem::Schedule::single());
    emulated_lse = std::move(e.lse);
    sum_rounding = std::move(e.row_sum_rounding);
  }
  std::optional<std::string> lse_hint;
  if (out_file.contains(o.lse_tensor)) {
    std::vector<float> got = *read_lse_tensor(out_file, o.lse_tensor, g.inputs.batch.total_q());
    if (empty_rows == check::EmptyRows::any)
      for (int64_t t = 0; t < g.layout.tokens(); ++t)
        if (g.layout.visible_kv(t) == 0)
          for (int h = 0; h < 16; ++h) got[static_cast<std::size_t>(t * 16 + h)] = emulated_lse[static_cast<std::size_t>(t * 16 + h)];
    lse = check::check_lse(got, emulated_lse, g.layout, sum_rounding);
    // A kernel that pre-scales q in bf16 moves its scores by ~2^-9 of each term: its output passes
    // as bf16 Q, its LSE does not on large scores. Say so when the pre-scaled Q explains it.
    if (!lse->pass() && report.pass() && recipe.q == problem::QFormat::bf16) {
      problem::Recipe prescaled = recipe;
      prescaled.q = problem::QFormat::bf16_scaled;
      const ref::EmulatedResult e = g.emulate(prescaled, problem::Schedule::single());
      if (check::check_lse(got, e.lse, g.layout, e.row_sum_rounding).pass())
        lse_hint = fmt::format(
            "hint: the LSE is within its bound for q=bf16-scaled (q times the softmax scale rounded "
            "to bf16 before Q·Kᵀ, as Triton kernels that pre-scale q do): if the kernel does that, "
            "judge it with --recipe {}",
            problem::spell(prescaled));
    }
  }
  const bool pass = report.pass() && (!lse || lse->pass());

  fmt::print("golden {} ({}), output {}:{}\n", o.golden, metadata_line(g.metadata), o.output,
             output_name);
  fmt::print("emulation: {}\n\n", emulation_source);
  fmt::print("{}\n{}", check::format_gate(report), check::format_power(power));
  if (lse)
    fmt::print("\nlse ({}): {}  {} rows of another class (-inf / NaN), {} beyond the bound; worst "
               "{:.1f} units of 2^-23 (|lse| + 1), allowed {:.1f} there ({} + the row sum's "
               "grouping term{}, check/lse.h)\n",
               o.lse_tensor, lse->pass() ? "PASS" : "FAIL", lse->class_mismatches, lse->beyond,
               lse->worst_units, lse->worst_allowed_units, check::kLseUnits,
               lse->row_sum_rounding ? " + P's rounding in a row sum of rounded P" : "");
  if (lse_hint) fmt::print("{}\n", *lse_hint);
  if (!report.pass() && empty_rows == check::EmptyRows::zero)
    if (const auto hint = empty_rows_hint(output, g.layout)) fmt::print("\n{}\n", *hint);
  const std::optional<std::string> sums_hint = tensor_core_sums_hint(recipe, schedule.has_value(), report);
  if (sums_hint) fmt::print("\n{}\n", *sums_hint);
  fmt::print("\nVERDICT: {}\n", pass ? "PASS" : "FAIL");
  if (!pass) {
    fmt::print("repro: {}\n", repro_line(o, recipe));
    fmt::print("next: mlacheck identify {} {}   # which recipe and schedule explain the output\n",
               shell_quote(o.golden), shell_quote(o.output));
  }

  if (o.json) {
    nlohmann::json j{{"golden", {{"path", o.golden}, {"metadata", g.metadata}}},
                     {"output", {{"path", o.output}, {"tensor", output_name}}},
                     {"recipe", problem::spell(recipe)},
                     {"schedule", schedule ? to_string(*schedule) : std::string("undeclared")},
                     {"emulation", emulation_source},
                     {"verdict", pass ? "pass" : "fail"},
                     {"gate", check::to_json(report)},
                     {"power", check::to_json(power)}};
    if (lse)
      j["lse"] = {{"pass", lse->pass()},
                  {"class_mismatches", lse->class_mismatches},
                  {"worst_units", lse->worst_units},
                  {"allowed_units", lse->worst_allowed_units},
                  {"rows_beyond", lse->beyond},
                  {"row_sum_rounding_term", lse->row_sum_rounding}};
    if (!pass) j["repro"] = repro_line(o, recipe);
    if (sums_hint) j["hint"] = *sums_hint;
    write_json_report(*o.json, j);
  }
  return pass ? kExitOk : kExitFail;
}

}  // namespace

void add_compare_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Judge a kernel's output against a golden file: total error vs out_exact, kernel "
      "error vs the recipe's emulation (the schedule-free bound unless --schedule is given), "
      "the harness's check beside them. Exit 0 pass, 1 fail, 2 usage or input error");
  sub->add_option("GOLDEN", opts->golden, "golden safetensors file (mlacheck-golden/1)")
      ->required();
  sub->add_option("OUTPUT", opts->output,
                  "safetensors file with the kernel's output [T, 16, 512] "
                  "(BF16, F16 or F32), optionally its lse [T, 16]")
      ->required();
  sub->add_option("--recipe", opts->recipe,
                  "the kernel's recipe: PRESET[:FIELD=VALUE,...] (see `mlacheck list`)")
      ->required();
  add_recipe_field_options(sub, opts->fields);
  sub->add_option("--schedule", opts->schedule,
                  "how the kernel cut the work: single | splits=N | split-len=K | chunk=K | "
                  "balanced=B/U/O | table=FILE, optionally ,tile=T (problem/schedule.h); "
                  "omitted: the schedule-free bound");
  sub->add_option("--tensor", opts->tensor,
                  "output tensor name (a file with one tensor may use any)")
      ->capture_default_str();
  sub->add_option("--lse-tensor", opts->lse_tensor,
                  "the kernel's LSE [T, 16] (natural log), checked when present")
      ->capture_default_str();
  sub->add_option("--empty-rows", opts->empty_rows,
                  "rows with no key: zero (must be 0, lse -inf) or any (not judged, counted)")
      ->check(CLI::IsMember({"zero", "any"}))
      ->capture_default_str();
  sub->add_option("--json", opts->json, "also write the full report as JSON to this file");
  sub->add_option("--worst", opts->worst, "how many worst elements to list")->check(unsigned_digits())->capture_default_str();
  sub->callback([&run, opts, sub] {
    opts->tensor_given = sub->count("--tensor") > 0;
    run = [opts] { return run_compare(*opts); };
  });
}

}  // namespace mlacheck::cli
