// The tolerance policy: format facts from quant's table, and the shape of both bounds.
#include "check/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "check/ulp.h"
#include "problem/recipe.h"
#include "tests/check/harness_like.h"

namespace mlacheck::check {
namespace {

problem::Recipe recipe(std::string_view name) {
  const auto r = problem::find_recipe(name);
  if (!r) throw std::runtime_error("no recipe " + std::string(name));
  return *r;
}

TEST(CheckTolerance, FormatStepsComeFromTheFormatTable) {
  EXPECT_EQ(precision(quant::ElemFormat::bf16).unit_roundoff(), std::ldexp(1.0, -8));
  EXPECT_EQ(precision(quant::ElemFormat::e4m3fn).unit_roundoff(), std::ldexp(1.0, -4));
  EXPECT_EQ(precision(quant::ElemFormat::e4m3fn).min_normal(), std::ldexp(1.0, -6));
  EXPECT_EQ(precision(quant::ElemFormat::e4m3fn).subnormal_half_step(), std::ldexp(1.0, -10));
  EXPECT_EQ(precision(quant::ElemFormat::e4m3fnuz).min_normal(), std::ldexp(1.0, -7));
  EXPECT_EQ(precision(quant::ElemFormat::e2m1).unit_roundoff(), 0.25);
  EXPECT_EQ(precision(quant::ElemFormat::e2m1).subnormal_half_step(), 0.25);     // 0.5 grid
  EXPECT_EQ(p_precision(recipe("a4w4")).unit_roundoff(), std::ldexp(1.0, -11));  // fp16 P
  EXPECT_EQ(p_precision(recipe("a8w8")).relative_step(), 0.125);
}

TEST(CheckTolerance, TailFactorGrowsSlowlyWithTheCount) {
  EXPECT_NEAR(tail_factor(1), std::sqrt(2 * std::log(1 / kFalseAlarmProbability)), 1e-12);
  EXPECT_LT(tail_factor(1000), tail_factor(1000000));
  EXPECT_LT(tail_factor(256 * 16 * 512), 8.0);  // the largest harness output
}

TEST(CheckTolerance, InputErrorsByFormat) {
  const auto d = testing::harness_like(2, 256, 1).data;
  EXPECT_EQ(q_relative_error(recipe("a16w16"), d), 0);
  EXPECT_EQ(v_relative_error(recipe("a16w16"), d), 0);
  // fp8 by the harness: two roundings, eps8 + eps16 + eps8 eps16, plus a negligible subnormal
  // floor.
  const double two = 0.0625 + 1.0 / 256 + 0.0625 / 256;
  EXPECT_GE(v_relative_error(recipe("a8w8"), d), two);
  EXPECT_LT(v_relative_error(recipe("a8w8"), d), two * 1.01);
  // MXFP4: 2^-2 sqrt(1 + 32 / 3.5^2) whatever the data; with the data's block maxima, the
  // measured floor 2^-2 sqrt(1 + mean amax^2 / (3.5^2 m2)), smaller for randn blocks.
  const double measured = v_relative_error(recipe("a16w4"), d);
  EXPECT_GT(measured, 0.25);
  EXPECT_LT(measured, 0.25 * std::sqrt(1 + 32 / 12.25));
  auto no_blocks = d;
  no_blocks.kv_block_amax_ms.clear();
  EXPECT_NEAR(v_relative_error(recipe("a16w4"), no_blocks), 0.25 * std::sqrt(1 + 32 / 12.25),
              1e-12);
  // fp8 cast of randn * 0.02 data: mostly subnormal (|q| < 2^-6), so the floor counts.
  EXPECT_GT(q_relative_error(recipe("a8w8-cast"), d), 0.0625 * 1.5);
}

TEST(CheckTolerance, TotalBoundIsBelowOneForEveryRecipeOnHarnessData) {
  // An all-zero output has relative error 1; every recipe's budget must be well below that.
  const auto h = testing::harness_like(2, 1024, 2);
  for (const problem::Recipe& r : problem::recipes()) {
    const Bound b = total_bound(r, h.data, h.layout);
    ASSERT_TRUE(b.has_row_bound);
    EXPECT_LT(b.row_rel_rms[0], 0.7) << r.name;
    EXPECT_GT(b.row_rel_rms[0], 0.0) << r.name;
    // No P underflow floor with harness scores; fp8 caches add only their flush floor, h x the
    // per-tensor scale (~2e-7 of max|KV|, far below any wrong answer's error).
    if (r.kv == problem::KvFormat::fp8) {
      EXPECT_GT(b.row_abs[0], 0.0) << r.name;
      EXPECT_LT(b.row_abs[0], 1e-5 * h.data.kv_abs_max) << r.name;
    } else {
      EXPECT_EQ(b.row_abs[0], 0.0) << r.name << ": no P underflow with harness scores";
    }
  }
}

TEST(CheckTolerance, KernelBoundIsAFewUlpsOnHarnessData) {
  const auto h = testing::harness_like(2, 1024, 3);
  const double typical = 4e-4;  // a typical harness output element
  for (const problem::Recipe& r : problem::recipes()) {
    const Bound b = kernel_bound(r, h.data, h.layout);
    EXPECT_EQ(b.elem_ulps, 1.5);
    EXPECT_FALSE(b.has_row_bound);
    const double ulps = b.element_tolerance(0, 0, typical, 0.0) / bf16_ulp(typical);
    EXPECT_GE(ulps, 1.5) << r.name;
    // bf16 partials of a8w8-cast allow one flipped partial; every other recipe stays near 2 ulps.
    EXPECT_LT(ulps, r.partial == problem::PartialFormat::bf16 ? 12.0 : 3.0) << r.name;
  }
}

TEST(CheckTolerance, EmptySequencesMustBeExactlyZero) {
  const problem::Batch batch({0, 1, 2}, {0, 0, 4}, {}, 1, 4);
  const auto layout = OutputLayout::from_batch(batch);
  const auto d = testing::harness_like(1, 4, 4).data;
  const Bound total = total_bound(recipe("a8w8"), d, layout);
  const Bound kernel = kernel_bound(recipe("a8w8"), d, layout);
  EXPECT_EQ(total.element_tolerance(0, 0, 0.0, 0.0), 0.0);
  EXPECT_EQ(total.row_tolerance(0, 0.0), 0.0);
  EXPECT_EQ(kernel.element_tolerance(0, 0, 0.0, 0.0),
            1.5 * bf16_ulp(0.0));  // below any nonzero bf16
  EXPECT_GT(total.element_tolerance(1, 0, 1e-3, 1e-3), 0.0);
  EXPECT_GT(kernel.element_tolerance(1, 0, 1e-3, 1e-3), 0.0);
}

TEST(CheckTolerance, ChannelProfileFollowsVChannels) {
  auto d = testing::harness_like(1, 64, 5).data;
  d.v_channel_ms.assign(512, 1.0);
  d.v_channel_ms[7] = 100.0;  // an outlier channel, 10x larger
  d.kv_block_amax_ms.assign(18, 4.0);
  d.kv_block_amax_ms[0] = 400.0;  // its block (dims 0..31): maxima 10x larger
  const double mean = (511 + 100) / 512.0;
  // a8w8 (per-element fp8): every term scales with the channel's own size.
  const Bound b = total_bound(recipe("a8w8"), d, OutputLayout::uniform(1, 64));
  ASSERT_EQ(b.channel_scale.size(), 512u);
  EXPECT_NEAR(b.channel(7), std::sqrt(100 / mean), 1e-12);
  EXPECT_NEAR(b.channel(0), std::sqrt(1 / mean), 1e-12);
  EXPECT_NEAR(b.channel(40), std::sqrt(1 / mean), 1e-12);
  EXPECT_GT(b.element_tolerance(0, 7, 0.0, 1.0), 9 * b.element_tolerance(0, 0, 0.0, 1.0));
  // a16w4 (MXFP4 V): the outlier sets its block's scale, so channel 0 (same block) errs far more
  // than channel 40 (another block) although both are the same size.
  const Bound m = total_bound(recipe("a16w4"), d, OutputLayout::uniform(1, 64));
  EXPECT_GT(m.channel(0), 3 * m.channel(40));
  EXPECT_GT(m.channel(7), m.channel(0));
}

}  // namespace
}  // namespace mlacheck::check
