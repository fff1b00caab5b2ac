// `mlacheck power`: the gate's power on generated cases: known-wrong outputs (cli/wrong_answers.h)
// scored against the gate and against the harness's own check (rtol = atol = 1e-2, NUMERICS
// §6.4), per recipe. Exit 1 when the gate accepts a wrong answer or rejects the recipe's own
// emulated output; a harness check that accepts wrong answers is the point of the table.
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/data_scale.h"
#include "check/gate.h"
#include "check/power.h"
#include "check/report_json.h"
#include "cli/commands.h"
#include "cli/json_report.h"
#include "cli/golden_case.h"
#include "cli/wrong_answers.h"
#include "io/golden.h"
#include "ref/case_list.h"

namespace mlacheck::cli {
namespace {

struct PowerOptions {
  std::string case_list = "data/cases/default.txt";
  std::vector<std::string> case_names;
  std::string recipes = "all";
  std::optional<std::string> json;
};

std::string cell(const check::PowerRow& r) {
  return fmt::format("{} / {}", r.gate_rejects ? "rejects" : "ACCEPTS", r.harness_rejects ? "rejects" : "accepts");
}

int run_power(const PowerOptions& o) {
  const std::vector<problem::Recipe> recipes = parse_recipes(o.recipes);
  std::vector<ref::CaseSpec> cases = ref::read_case_list(o.case_list);
  if (!o.case_names.empty())
    std::erase_if(cases, [&](const ref::CaseSpec& s) {
      return std::find(o.case_names.begin(), o.case_names.end(), s.name) == o.case_names.end();
    });
  if (cases.empty()) throw std::invalid_argument("no case selected from " + o.case_list);

  const std::vector<std::string> columns{"emulated", "zeros", "drop-token", "skip-rope", "forget-kv-scale",
                                         "v-wrong-dims", "drop-split"};
  fmt::print("Each cell: gate verdict / harness check (rtol = atol = 1e-2) verdict. 'emulated' is the\n"
             "control (the recipe's own emulated output: both must accept it); every other column is a\n"
             "known-wrong output that the gate must reject.\n\n");
  std::string header = fmt::format("| {:<14} | {:<11} |", "case", "recipe");
  std::string rule = "|----------------|-------------|";
  for (const std::string& c : columns) {
    header += fmt::format(" {:<19} |", c);
    rule += "---------------------|";
  }
  fmt::print("{}\n{}\n", header, rule);

  nlohmann::json report = nlohmann::json::array();
  int failures = 0;
  for (const ref::CaseSpec& spec : cases) {
    GoldenCase c = generate_case(spec);
    complete(c, recipes);
    const check::DataScale data = check::data_scale(c.q, c.kv, c.batch);
    const check::OutputLayout layout = check::OutputLayout::from_batch(c.batch);
    WrongAnswers wrong(c);
    for (const problem::Recipe& r : recipes) {
      const auto& emulated = std::find_if(c.emulated.begin(), c.emulated.end(),
                                          [&](const auto& e) { return e.first == r.name; })->second.out;
      const check::Gate gate(r, data, layout, c.exact->out, emulated);
      const check::PowerReport power = check::score_power(gate, wrong.for_recipe(r));
      std::string line = fmt::format("| {:<14} | {:<11} |", spec.name, r.name);
      for (const std::string& col : columns) {
        auto it = std::find_if(power.rows.begin(), power.rows.end(), [&](const check::PowerRow& row) {
          return row.name == col || (col == "emulated" && !row.expected_reject);
        });
        line += fmt::format(" {:<19} |", it == power.rows.end() ? "n/a" : cell(*it));
      }
      fmt::print("{}\n", line);
      std::fflush(stdout);
      for (const std::string& w : power.warnings()) {
        fmt::print(stderr, "mlacheck power: {} {}: {}\n", spec.name, r.name, w);
        ++failures;
      }
      report.push_back({{"case", spec.name}, {"recipe", r.name}, {"power", check::to_json(power)}});
    }
  }
  if (o.json) {
    write_json_report(*o.json, report);
  }
  fmt::print("\n{}\n", failures == 0 ? "The gate rejects every wrong answer and accepts every control."
                                     : fmt::format("{} verdicts of the gate are wrong (see stderr).", failures));
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
  sub->callback([&run, o] { run = [o] { return run_power(*o); }; });
}

}  // namespace mlacheck::cli
