// The power report: known-wrong outputs scored against the gate and the harness's check.
#include "check/power.h"
#include "check/ulp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "check/report_json.h"
#include "check/report_text.h"
#include "problem/recipe.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "tests/check/harness_like.h"

namespace mlacheck::check {
namespace {

using testing::harness_like;
using testing::to_bf16;

// Wrong answers a caller would compute with the reference; here made from the test data directly.
// "wrong-dims": V read from the cache's dims 64..575 instead of 0..511, averaged uniformly.
WrongAnswer wrong_dims(const testing::HarnessLike& h) {
  std::vector<float> out(h.exact.size());
  const int64_t n = h.batch.kv_len(0);
  for (int64_t b = 0; b < h.batch.num_requests(); ++b)
    for (int head = 0; head < problem::kNumHeads; ++head)
      for (int d = 0; d < problem::kVDim; ++d) {
        double acc = 0;
        for (int64_t t = 0; t < n; ++t)
          acc += quant::bf16_to_f32(h.kv[static_cast<std::size_t>(
              h.batch.kv_row(b, t) * problem::kQkDim + problem::kRopeDim + d)]);
        out[static_cast<std::size_t>((b * problem::kNumHeads + head) * problem::kVDim + d)] =
            static_cast<float>(acc / static_cast<double>(n));
      }
  return {"wrong-dims", "V from dims 64..575", out};
}

TEST(CheckPower, ZerosAndWrongDimsRejectedByTheGateNotByTheHarness) {
  const auto h = harness_like(2, 512, 71);
  const problem::Recipe r = *problem::find_recipe("a8w8");
  const auto emu = to_bf16(h.exact);
  const Gate gate(r, h.data, h.layout, h.exact, emu);
  const std::vector<WrongAnswer> wrong{all_zeros(h.layout), wrong_dims(h)};
  const PowerReport p = score_power(gate, wrong);
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_EQ(p.rows[0].name, "emulated");  // the control
  EXPECT_FALSE(p.rows[0].expected_reject);
  EXPECT_FALSE(p.rows[0].gate_rejects);
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(p.rows[i].gate_rejects) << p.rows[i].name;
    EXPECT_TRUE(p.rows[i].total_rejects) << p.rows[i].name;
    EXPECT_FALSE(p.rows[i].harness_rejects) << p.rows[i].name;
  }
  EXPECT_NEAR(p.rows[1].total_rel_fro, 1.0, 1e-12);
  EXPECT_TRUE(p.gate_has_power()) << format_power(p);
  EXPECT_NE(format_power(p).find("wrong-dims"), std::string::npos);
}

// The exact output 5 % off. With no emulated output under a16w4 only the total bound judges, and
// its MXFP4 budget (~0.47 of the RMS) cannot see a 5 % error, which is well past the 1.5 ulps
// (~1 %) that make a wrong answer visible.
std::vector<float> five_percent_off(const std::vector<float>& exact) {
  std::vector<float> off(exact);
  for (float& x : off) x *= 1.05f;
  return off;
}

TEST(CheckPower, FlagsAnAnswerTheGateCannotReject) {
  const auto h = harness_like(1, 256, 81);
  const Gate gate(*problem::find_recipe("a16w4"), h.data, h.layout, h.exact, {});
  const std::vector<float> off = five_percent_off(h.exact);
  const std::vector<WrongAnswer> wrong{{"slightly-off", "the exact output times 1.05", off}};
  const PowerReport p = score_power(gate, wrong);
  ASSERT_EQ(p.rows.size(), 1u);
  const PowerRow& row = p.rows[0];
  EXPECT_TRUE(row.visible());
  EXPECT_FALSE(row.gate_rejects);
  EXPECT_FALSE(p.gate_has_power());
  ASSERT_EQ(p.warnings().size(), 1u);
  EXPECT_NE(p.warnings()[0].find("cannot reject 'slightly-off'"), std::string::npos);
}

TEST(CheckPower, DoesNotScoreAnAnswerWithNoVisibleEffect) {
  const auto h = harness_like(1, 256, 81);
  const problem::Recipe r = *problem::find_recipe("a16w4");
  const auto emu = to_bf16(h.exact);
  const Gate gate(r, h.data, h.layout, h.exact, emu);
  // "Wrong" by a quarter of a bf16 ulp of every element: no bf16 output can show it.
  std::vector<float> off(h.exact);
  for (float& x : off) x += static_cast<float>(0.25 * bf16_ulp(x));
  const std::vector<WrongAnswer> wrong{{"invisible", "a quarter ulp off", off}};
  const PowerReport p = score_power(gate, wrong);
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_FALSE(p.rows[1].visible()) << p.rows[1].effect_ulps;
  EXPECT_TRUE(p.gate_has_power());
}

TEST(CheckPower, FlagsABoundThatRejectsTheRecipesOwnEmulation) {
  const auto h = harness_like(1, 256, 91);
  const problem::Recipe r = *problem::find_recipe("a16w16");
  // An "emulation" 10 % off the exact output: far beyond a16w16's total budget (~1 %).
  std::vector<float> off(h.exact);
  for (float& x : off) x *= 1.1f;
  const auto emu = to_bf16(off);
  const Gate gate(r, h.data, h.layout, h.exact, emu);
  const PowerReport p = score_power(gate, std::vector<WrongAnswer>{});
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_TRUE(p.rows[0].gate_rejects);
  ASSERT_EQ(p.warnings().size(), 1u);
  EXPECT_NE(p.warnings()[0].find("too tight"), std::string::npos);
  const auto j = to_json(p);
  EXPECT_FALSE(j.at("gate_has_power").get<bool>());
  EXPECT_EQ(j.at("rows").size(), 1u);
}

TEST(CheckPower, JudgesTheLseOfAnAnswerThatHasOne) {
  const auto h = harness_like(1, 256, 81);
  // An output the total bound alone accepts (five_percent_off), with LSEs near and far.
  const Gate gate(*problem::find_recipe("a16w4"), h.data, h.layout, h.exact, {});
  const std::vector<float> off = five_percent_off(h.exact);
  const auto rows = static_cast<std::size_t>(h.layout.rows());
  const std::vector<float> ref_lse(rows, 2.5f), no_rounding(rows, 0.0f);
  // Scores shifted by 0.1 (a skipped term): far beyond 64 units of 2^-23 plus the grouping term.
  std::vector<float> shifted(ref_lse);
  for (float& x : shifted) x += 0.1f;
  // Within the tolerance: 8 units of 2^-23 (|lse| + 1).
  std::vector<float> close(ref_lse);
  for (float& x : close) x += std::ldexp(8.0f * 3.5f, -23);
  std::vector<WrongAnswer> wrong{{"lse-off", "5 % off, LSE 0.1 off", off, false, {}, shifted},
                                 {"no-lse", "5 % off, no LSE", off},
                                 {"control-close", "a correct LSE", off, true, {}, close},
                                 {"control-off", "a control whose LSE is off", off, true, {}, shifted}};
  const PowerReport p = score_power(gate, wrong, LseReference{ref_lse, no_rounding});
  ASSERT_EQ(p.rows.size(), 4u);
  const PowerRow& lse_off = p.rows[0];
  EXPECT_FALSE(lse_off.gate_rejects);
  ASSERT_TRUE(lse_off.lse_rejects.has_value());
  EXPECT_TRUE(*lse_off.lse_rejects);
  EXPECT_TRUE(lse_off.rejected_by_lse_only());
  EXPECT_TRUE(lse_off.ok());
  EXPECT_FALSE(p.rows[1].lse_rejects.has_value());  // no LSE: judged on the output alone
  EXPECT_FALSE(p.rows[1].ok());
  ASSERT_TRUE(p.rows[2].lse_rejects.has_value());
  EXPECT_FALSE(*p.rows[2].lse_rejects) << p.rows[2].lse_worst_ratio;
  EXPECT_TRUE(p.rows[2].ok());
  EXPECT_FALSE(p.rows[3].ok());  // a control whose LSE is rejected: a bound too tight
  const std::vector<std::string> w = p.warnings();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[1].find("rejects the LSE of 'control-off'"), std::string::npos) << w[1];
  const auto j = to_json(p);
  EXPECT_TRUE(j.at("rows")[0].at("lse_rejects").get<bool>());
  EXPECT_TRUE(j.at("rows")[0].at("rejects_output_or_lse").get<bool>());
  EXPECT_TRUE(j.at("rows")[1].at("lse_rejects").is_null());
  // Without a reference LSE nothing is judged on it.
  const PowerReport plain = score_power(gate, wrong);
  EXPECT_FALSE(plain.rows[0].lse_rejects.has_value());
  EXPECT_FALSE(plain.rows[0].ok());
}

TEST(CheckPower, WrongSizeIsAnError) {
  const auto h = harness_like(1, 64, 95);
  const Gate gate(*problem::find_recipe("a8w8"), h.data, h.layout, h.exact, {});
  const std::vector<WrongAnswer> wrong{{"short", "", std::vector<float>(10)}};
  EXPECT_THROW(score_power(gate, wrong), std::invalid_argument);
}

}  // namespace
}  // namespace mlacheck::check
