// The total bound (check/tolerance.h total_bound, output vs exact) on outlier channels, judged both
// ways with the real references: a case where the plain row RMS of the reference is a poor scale
// for the row's errors (few keys, so a row may hold no large value in the few outlier channels)
// is accepted for every recipe, and the known-wrong outputs of cli/wrong_answers.h on it are
// still rejected by the total bound alone (no emulated output, so no kernel bound helps).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/gate.h"
#include "check/report_text.h"
#include "cli/golden_case.h"
#include "cli/wrong_answers.h"
#include "problem/recipe.h"
#include "ref/case_list.h"

namespace mlacheck::ref {
namespace {

// Found by GpuProperty.EveryStrategyPassesTheGateAgainstItsEmulation on the H200 (device run 7):
// a16w8 single-pass at 0 ulps from its emulation, 106 of 1664 rows beyond the total row bound.
constexpr const char* kShortOutlierRows =
    "name=short_outliers batch=52 kv_len=3 seed=19 q_len=2 profile=outliers page_size=2 shuffle_pages=1";

cli::GoldenCase completed(const char* line) {
  cli::GoldenCase c = cli::generate_case(parse_case_list(line, "test").at(0));
  cli::complete(c, problem::recipes());
  return c;
}

const ref::EmulatedResult& emulated(const cli::GoldenCase& c, const problem::Recipe& r) {
  for (const auto& [name, result] : c.emulated)
    if (name == r.name) return result;
  throw std::logic_error("no emulation of " + std::string(r.name));
}

TEST(TotalBound, AcceptsEveryRecipeOnShortRowsWithOutlierChannels) {
  const cli::GoldenCase c = completed(kShortOutlierRows);
  const check::DataScale data = check::data_scale(c.q, c.kv, c.batch);
  const check::OutputLayout layout = check::OutputLayout::from_batch(c.batch);
  for (const problem::Recipe& r : problem::recipes()) {
    const check::Gate total_only(r, data, layout, c.exact->out, {});
    const check::GateReport g = total_only.judge(cli::widen_bf16(emulated(c, r).out), 3);
    EXPECT_TRUE(g.total.pass()) << r.name << "\n" << check::format_gate(g);
  }
}

TEST(TotalBound, RejectsWrongAnswersOnShortRowsWithOutlierChannels) {
  const cli::GoldenCase c = completed(kShortOutlierRows);
  const check::DataScale data = check::data_scale(c.q, c.kv, c.batch);
  const check::OutputLayout layout = check::OutputLayout::from_batch(c.batch);
  cli::WrongAnswers wrong(c);
  int scored = 0;
  for (const problem::Recipe& r : problem::recipes()) {
    const check::Gate total_only(r, data, layout, c.exact->out, {});
    for (const check::WrongAnswer& w : wrong.for_recipe(r)) {
      if (w.control) continue;
      // skip-rope moves these outputs by less than the recipes' own error: no total bound can see
      // it (the kernel bound does, ScheduleFreeGate / CheckPower).
      if (w.name == "skip-rope") continue;
      const check::GateReport g = total_only.judge(w.output, 3);
      EXPECT_FALSE(g.total.pass()) << r.name << " " << w.name << " (" << w.what << ")";
      ++scored;
    }
  }
  EXPECT_EQ(scored, 7 * 3 + 6);  // zeros, drop-token, v-wrong-dims for all; forget-kv-scale: no bf16 KV
}

}  // namespace
}  // namespace mlacheck::ref
