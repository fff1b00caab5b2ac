// `mlacheck verify [--tier T | --cases FILE] [--case NAME,...] [--strategy GLOB] [--json F] [--junit F]`:
// every registry strategy matching the glob, on every case of the list (default: the standard
// tier, data/cases/standard.txt: cli/case_tier.h), run on the GPU and judged by the gate (DESIGN.md "Three
// errors, not one"): kernel error against the recipe's emulated output with the strategy's own
// split count (tight bound), total error against the exact output (recipe tolerance). The kernel's
// LSE is compared with the emulated LSE as well. Device inputs are poisoned
// (gpu/device_problem.h). Exit 0 when every supported (case, strategy) passes, 1 otherwise.
//
// Without a usable GPU it says so once and checks the CPU side only: the references and the
// gate's power (the all-zero output rejected, the emulated output accepted); exit 1 only if that
// fails.
//
// --shard i/n runs one share of the cases (cli/shard.h): a CI matrix of n jobs covers the list.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/data_scale.h"
#include "check/gate.h"
#include "check/layout.h"
#include "check/lse.h"
#include "check/power.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/shell_quote.h"
#include "io/atomic_file.h"
#include "cli/json_report.h"
#include "cli/case_tier.h"
#include "cli/gpu_cases.h"
#include "cli/shard.h"
#include "cli/verify_mutants.h"
#include "gpu/availability.h"
#include "gpu/registry.h"
#include "quant/bf16.h"
#include "problem/recipe.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#endif

namespace mlacheck::cli {
namespace {

struct VerifyOptions {
  std::string case_list;
  CaseTier tier = CaseTier::standard;
  std::vector<std::string> case_names;
  std::string strategy = "*";
  std::optional<std::string> json, junit;
  bool details = false;
  std::optional<Shard> shard;  // --shard i/n: this share of the cases (cli/shard.h)
  bool mutants = false;        // --mutants: the planted faults' catch rate (cli/verify_mutants.h)
};

struct Row {
  std::string case_name, strategy;
  std::string verdict;  // PASS, FAIL, unsupported, error, cpu-ok, cpu-FAIL
  bool failed = false;
  std::vector<std::string> reasons;
  std::optional<check::GateReport> gate;
  std::optional<check::LseReport> lse;
  std::optional<check::PowerReport> power;
  double ms = std::numeric_limits<double>::quiet_NaN();  // GPU time of the run
};

std::string cell_ulps(const Row& r) {
  return r.gate && r.gate->kernel ? std::to_string(r.gate->kernel->ulps.max) : "-";
}

void print_header() {
  fmt::print("{:<16} {:<33} {:<12} {:>9} {:>11} {:>10} {:>8} {:>9}\n", "case", "strategy",
             "verdict", "kern ulps", "total relF", "worst row", "lse err", "gpu ms");
}

void print_row(const Row& r) {
  std::string total_fro = "-", worst = "-", lse = "-", ms = "-";
  if (r.power)  // no GPU: the control row, i.e. the recipe error (emulated vs exact)
    for (const check::PowerRow& p : r.power->rows)
      if (!p.expected_reject) total_fro = fmt::format("{:.3e}", p.total_rel_fro);
  if (r.gate) {
    total_fro = fmt::format("{:.3e}", r.gate->total.rel_fro_err);
    const check::RowReport& w = r.gate->total.worst_row;
    if (w.token >= 0 && std::isfinite(w.tolerance) && w.tolerance > 0)
      worst = fmt::format("{:.3f}", w.bound_rms / w.tolerance);
  }
  if (r.lse)
    lse = r.lse->class_mismatches > 0 ? "class!" : fmt::format("{:.1f}", r.lse->worst_units);
  if (std::isfinite(r.ms)) ms = fmt::format("{:.3f}", r.ms);
  fmt::print("{:<16} {:<33} {:<12} {:>9} {:>11} {:>10} {:>8} {:>9}\n", r.case_name, r.strategy,
             r.verdict, cell_ulps(r), total_fro, worst, lse, ms);
  for (const std::string& why : r.reasons) fmt::print("    {}\n", why);
  std::fflush(stdout);
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void write_junit(const std::string& path, const std::string& suite, const std::vector<Row>& rows,
                 double seconds) {
  int failures = 0, skipped = 0;
  for (const Row& r : rows) {
    failures += r.failed ? 1 : 0;
    skipped += r.verdict == "unsupported" || r.verdict == "cpu-ok" ? 1 : 0;
  }
  std::ostringstream f;  // written whole, atomically, below
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
    << fmt::format("<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" "
                   "skipped=\"{}\" time=\"{:.3f}\">\n",
                   xml_escape(suite), rows.size(), failures, skipped, seconds);
  for (const Row& r : rows) {
    f << fmt::format("  <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\">",
                     xml_escape(r.case_name), xml_escape(r.strategy),
                     std::isfinite(r.ms) ? r.ms / 1000.0 : 0.0);
    std::string why;
    for (const std::string& s : r.reasons) why += (why.empty() ? "" : "; ") + s;
    if (r.failed)
      f << "<failure message=\"" << xml_escape(why) << "\"/>";
    else if (r.verdict == "unsupported")
      f << "<skipped message=\"" << xml_escape(why) << "\"/>";
    else if (r.verdict == "cpu-ok")
      f << "<skipped message=\"no GPU: CPU side checked (the gate rejects the all-zero output and "
           "accepts the emulated one)\"/>";
    f << "</testcase>\n";
  }
  f << "</testsuite>\n</testsuites>\n";
  io::write_file_atomically(path, f.str());
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json j{{"case", r.case_name},
                   {"strategy", r.strategy},
                   {"verdict", r.verdict},
                   {"failed", r.failed},
                   {"reasons", r.reasons}};
  if (std::isfinite(r.ms)) j["gpu_ms"] = r.ms;
  if (r.gate) j["gate"] = check::to_json(*r.gate);
  if (r.lse)
    j["lse"] = {{"class_mismatches", r.lse->class_mismatches},
                {"worst_units", r.lse->worst_units},
                {"worst_index", r.lse->worst_index},
                {"bound_units", r.lse->worst_allowed_units},
                {"rows_beyond", r.lse->beyond}};
  if (r.power) j["power"] = check::to_json(*r.power);
  return j;
}

int run_verify(const VerifyOptions& o) {
  require_distinct({{"--json", o.json.value_or("")}, {"--junit", o.junit.value_or("")}}, {{"--case-list", o.case_list}});
  const auto started = std::chrono::steady_clock::now();
  if (o.mutants && !gpu::mutants_built())  // before any work: nothing it could report would be measured
    throw std::invalid_argument("--mutants: this binary has no planted faults; build one with "
                                "-DMLACHECK_MUTANTS=ON (never the binary you gate with)");
  const std::string list = o.case_list.empty() ? tier_case_list(o.tier) : o.case_list;
  const std::vector<ref::CaseSpec> listed = select_cases(list, o.case_names);
  const std::vector<ref::CaseSpec> cases = o.shard ? cases_of_shard(listed, *o.shard) : listed;
  const std::vector<const gpu::Strategy*> strategies = gpu::match_strategies(o.strategy);
  if (strategies.empty())
    throw std::invalid_argument("no strategy matches '" + o.strategy + "' (see `mlacheck list`)");

  const std::optional<std::string> no_gpu = gpu::unavailable_reason();
  std::optional<MutantTally> mutant_tally;
  if (o.mutants) {
    if (no_gpu) throw std::invalid_argument("--mutants runs the planted faults on a GPU: " + *no_gpu);
    mutant_tally.emplace();
  }
  fmt::print("mlacheck verify: {} cases from {} x {} strategies matching '{}'\n", cases.size(),
             list, strategies.size(), o.strategy);
  if (o.shard)
    fmt::print("{}{}\n", shard_summary(*o.shard, cases.size(), listed.size(), "cases"),
               cases.empty() ? "" : " (balanced by " + case_cost_rule() + ")");
  if (no_gpu)
    fmt::print("GPU: not available ({}); checking the CPU side only: references and the gate's "
               "power (all-zero output rejected, emulated output accepted)\n",
               *no_gpu);
  fmt::print("kern ulps: max bf16 ulps of kernel error (output vs emulated recipe, the strategy's "
             "splits); total relF: ||out - exact|| / ||exact|| (no GPU: of the emulated output); "
             "worst row: worst row error / its bound (total); lse err: max |lse - emulated| in units "
             "of 2^-23 (|lse| + 1) (bound {} + the row sum's grouping term, check/lse.h); gpu ms: one run, events around the launch\n\n",
             check::kLseUnits);
  print_header();

  std::vector<Row> rows;
  for (const ref::CaseSpec& spec : cases) {
    PreparedCase pc(spec);
    const ref::Inputs& in = pc.inputs();
    const ref::ExactResult exact = ref::decode_exact(in.batch, in.q, in.kv);
    const check::DataScale data = check::data_scale(in.q, in.kv, in.batch);
    const check::OutputLayout layout = check::OutputLayout::from_batch(in.batch);
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
    std::unique_ptr<gpu::DeviceProblem> device;
    if (!no_gpu) device = std::make_unique<gpu::DeviceProblem>(in.batch, in.q);
#endif
    // Emulated outputs by (recipe as spelled, split plan, softmax step, tensor-core orders): the
    // strategies of a recipe differ there, and a registry row may change a field of its preset
    // (gpu/registry.cpp Row).
    std::map<std::tuple<std::string, problem::SplitPlan, int, const int*, const int*>, ref::EmulatedResult>
        emulated;
    for (const gpu::Strategy* s : strategies) {
      Row row;
      row.case_name = spec.name;
      row.strategy = s->name;
      try {
        const problem::KvCache cache = pc.cache_for(s->recipe);
        if (const auto why = s->supports(in.batch, cache)) {
          row.verdict = "unsupported";
          row.reasons.push_back("unsupported: " + *why);
          print_row(row);
          rows.push_back(std::move(row));
          continue;
        }
        const problem::SplitPlan plan = s->emulated_plan(in.batch, gpu::planning_multiprocessors());
        const auto key = std::make_tuple(problem::spell(s->recipe), plan, s->recipe.softmax_tile,
                                         s->tc_qk_order.data(), s->tc_pv_order.data());
        if (!emulated.contains(key)) {
          ref::EmulationOptions orders;
          orders.tc_qk_order = s->tc_qk_order;
          orders.tc_pv_order = s->tc_pv_order;
          emulated.emplace(key, ref::decode_emulated(in.batch, in.q, cache, s->recipe, plan, orders));
        }
        const ref::EmulatedResult& emu = emulated.at(key);
        const check::Gate gate(s->recipe, data, layout, exact.out, emu.out);
        if (no_gpu) {
          const std::vector<check::WrongAnswer> wrong{check::all_zeros(layout)};
          row.power = check::score_power(gate, wrong);
          const std::vector<std::string> warnings = row.power->warnings();
          row.failed = !warnings.empty();
          row.verdict = row.failed ? "cpu-FAIL" : "cpu-ok";
          row.reasons = warnings;
        } else {
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
          const gpu::RunResult r = device->run(*s, cache);
          row.ms = r.milliseconds;
          std::vector<float> out(r.out.size());
          for (std::size_t i = 0; i < out.size(); ++i) out[i] = quant::bf16_to_f32(r.out[i]);
          row.gate = gate.judge(out);
          row.lse = check::check_lse(r.lse, emu.lse, layout);
          row.reasons = row.gate->reasons();
          if (row.lse->class_mismatches > 0)
            row.reasons.push_back(fmt::format("lse: {} rows where -inf/NaN differ from emulated",
                                              row.lse->class_mismatches));
          else if (!row.lse->pass())
            row.reasons.push_back(fmt::format(
                "lse: {} rows beyond the bound, worst {:.1f} units of 2^-23 (|lse| + 1) from emulated "
                "(bound there {:.1f}), token {} head {}: {} vs {}",
                row.lse->beyond, row.lse->worst_units, row.lse->worst_allowed_units, row.lse->worst_index / 16,
                row.lse->worst_index % 16, row.lse->worst_got, row.lse->worst_ref));
          row.failed = !(row.gate->pass() && row.lse->pass());
          row.verdict = row.failed ? "FAIL" : "PASS";
          // A row that passed measures the planted faults: same inputs, same gate, one fault on.
          if (mutant_tally && !row.failed)
            mutant_tally->run_faults(*s, spec.name, [&] {
              const gpu::RunResult m = device->run(*s, cache);
              std::vector<float> m_out(m.out.size());
              for (std::size_t i = 0; i < m_out.size(); ++i) m_out[i] = quant::bf16_to_f32(m.out[i]);
              return !(gate.judge(m_out).pass() && check::check_lse(m.lse, emu.lse, layout).pass());
            });
#endif
        }
      } catch (const std::exception& e) {
        row.verdict = "error";
        row.failed = true;
        row.reasons.push_back(e.what());
      }
      if (row.failed)  // the command that reruns this one row
        row.reasons.push_back(fmt::format(
            "repro: mlacheck verify --case-list {} --case {} --strategy {} --details",
            shell_quote(list), shell_quote(spec.name), shell_quote(s->name)));
      print_row(row);
      if (o.details && row.gate) fmt::print("{}\n", check::format_gate(*row.gate));
      rows.push_back(std::move(row));
    }
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  int failed = 0, passed = 0, unsupported = 0;
  for (const Row& r : rows) {
    failed += r.failed ? 1 : 0;
    passed += !r.failed && r.verdict != "unsupported" ? 1 : 0;
    unsupported += r.verdict == "unsupported" ? 1 : 0;
  }
  fmt::print("\n{}{} {}, {} failed, {} unsupported ({} case x strategy pairs, {:.1f} s)\n",
             o.shard ? shard_summary(*o.shard, cases.size(), listed.size(), "cases") + ": " : "",
             passed, no_gpu ? "CPU-side checks passed (no GPU: nothing ran on a device)" : "passed",
             failed, unsupported, rows.size(), seconds);
  if (o.json) {
    nlohmann::json j{{"cases", list},
                     {"strategy_glob", o.strategy},
                     {"gpu", no_gpu ? nlohmann::json(*no_gpu) : nlohmann::json("available")},
                     {"passed", passed},
                     {"failed", failed},
                     {"unsupported", unsupported},
                     {"rows", nlohmann::json::array()}};
    if (o.shard)
      j["shard"] = {{"index", o.shard->index}, {"count", o.shard->count}, {"cases", cases.size()},
                    {"of_cases", listed.size()}};
    for (const Row& r : rows) j["rows"].push_back(row_json(r));
    if (mutant_tally) j["mutants"] = mutant_tally->to_json();
    write_json_report(*o.json, j);
  }
  if (o.junit)
    write_junit(*o.junit, o.shard ? "mlacheck verify " + to_string(*o.shard) : "mlacheck verify", rows,
                seconds);
  if (mutant_tally) {
    mutant_tally->print(list);
    if (failed > 0) fmt::print("(the unmutated kernels failed {} rows: those rows measured no fault)\n", failed);
    return failed == 0 && mutant_tally->all_caught() ? kExitOk : kExitFail;
  }
  return failed == 0 ? kExitOk : kExitFail;
}

}  // namespace

void add_verify_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Run every GPU strategy (or those matching --strategy) on each case and judge it "
                "with the gate: kernel error vs the emulated recipe, total error vs exact. Exit 0 "
                "all pass, 1 any failure, 2 usage error");
  CLI::Option* list = sub->add_option("--cases,--case-list", o->case_list,
                                      "case list file (default: the --tier's list)");
  add_tier_option(*sub, o->tier, "default: standard")->excludes(list);
  sub->add_option("--case", o->case_names, "only these case names (comma-separated)")
      ->delimiter(',');
  sub->add_option("--strategy", o->strategy,
                  "glob over registry names recipe/schedule/family (* and ?; several separated by commas: any "
                  "of them; see `mlacheck list`)")
      ->capture_default_str();
  sub->add_option("--json", o->json, "write every row, with its full gate report, as JSON");
  sub->add_option("--junit", o->junit, "write a JUnit XML report (one testcase per row)");
  sub->add_flag("--details", o->details, "print the full gate report of every row");
  sub->add_flag("--mutants", o->mutants,
                "also run every planted fault (gpu/mutants.h) on each passing row and report the catch "
                "rate per fault; exit 1 when one escapes (needs a -DMLACHECK_MUTANTS=ON build and a GPU)");
  add_shard_option(*sub, o->shard, "cases (after --case), balanced by their cost, " + case_cost_rule());
  sub->callback([&run, o] { run = [o] { return run_verify(*o); }; });
}

}  // namespace mlacheck::cli
