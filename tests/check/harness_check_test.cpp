// The harness's own check (NUMERICS §6.4) on its corner cases.
#include "check/harness_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr HarnessTolerance kFinal{};  // rtol = atol = 1e-2

uint16_t bf(float x) { return quant::f32_to_bf16(x); }
float next_float_up(float x) { return std::nextafter(x, kInf); }

// The tolerance the harness computes for a reference, step by step as §6.4 writes it.
float harness_tol(float ref) {
  const float scaled = quant::bf16_to_f32(bf(0.01f * std::fabs(ref)));
  return quant::bf16_to_f32(bf(0.01f + scaled));
}

TEST(CheckHarness, ToleranceIsEvaluatedInBf16) {
  // ref = 1: fl32(0.01) + 0.01 = 0.02 in float32, but bf16(0.02) = 0.02001953125.
  const float tol = harness_tol(1.0f);
  EXPECT_EQ(tol, 0.02001953125f);
  const float ref = 1.0f;
  // Exactly at the tolerance passes (diff > tol fails, diff == tol does not) ...
  EXPECT_FALSE(harness_element_fails(ref + tol, bf(ref), kFinal));
  // ... and the smallest float above it fails, although it is within the float32 0.02 + 1e-4.
  EXPECT_TRUE(harness_element_fails(next_float_up(ref + tol), bf(ref), kFinal));
  // A float32 tolerance would have rejected 1.02001953125 (> 0.0200000014); bf16 accepts it.
  EXPECT_GT(tol, 0.01f + 0.01f * 1.0f);
}

TEST(CheckHarness, RtolProductRoundedToBf16First) {
  // ref = bf16 0x3DDD = 0.10791015625: rtol |r| = 0.0010791 rounds to bf16 0.00107574462890625,
  // so tol = bf16(0.01 + that) = 0.01104736328125; without the inner rounding it would be
  // bf16(0.0110791) = 0.0111083984375, and a diff of 0.0111 would pass.
  const float r = 0.10791015625f;
  EXPECT_EQ(harness_tol(r), 0.01104736328125f);
  EXPECT_FALSE(harness_element_fails(r + 0.01104736328125f, bf(r), kFinal));
  EXPECT_TRUE(harness_element_fails(r + 0.0111f, bf(r), kFinal));
  // ref = 3: 0.01 * 3 = 0.03 rounds to bf16 0.030029296875, then + 0.01 -> bf16(0.040029...)
  // = 0.0400390625. The plain formula would give 0.04.
  EXPECT_EQ(harness_tol(3.0f), 0.0400390625f);
  EXPECT_FALSE(harness_element_fails(3.0f + 0.0400390625f, bf(3.0f), kFinal));
  EXPECT_TRUE(harness_element_fails(next_float_up(3.0f + 0.0400390625f), bf(3.0f), kFinal));
  // Negative references use |r|.
  EXPECT_FALSE(harness_element_fails(-3.0f - 0.0400390625f, bf(-3.0f), kFinal));
}

TEST(CheckHarness, NanAndInfRules) {
  EXPECT_FALSE(harness_element_fails(kNaN, bf(kNaN), kFinal));  // both NaN pass
  EXPECT_TRUE(harness_element_fails(kNaN, bf(1.0f), kFinal));   // exactly one NaN
  EXPECT_TRUE(harness_element_fails(1.0f, bf(kNaN), kFinal));
  EXPECT_FALSE(harness_element_fails(kInf, bf(kInf), kFinal));    // both +Inf pass
  EXPECT_FALSE(harness_element_fails(-kInf, bf(-kInf), kFinal));  // both -Inf pass
  EXPECT_TRUE(harness_element_fails(kInf, bf(-kInf), kFinal));    // +Inf vs -Inf
  EXPECT_TRUE(harness_element_fails(kInf, bf(1.0f), kFinal));     // Inf vs a number
  EXPECT_TRUE(harness_element_fails(1.0f, bf(-kInf), kFinal));
  EXPECT_TRUE(harness_element_fails(kNaN, bf(kInf), kFinal));
}

TEST(CheckHarness, AcceptsZerosForHarnessSizedOutputs) {
  // Outputs of the harness's size (max |out| ~2.4e-3, NUMERICS §6.2) are all within atol = 1e-2
  // of zero: the check accepts an all-zero output. This is why the gate has bounds of its own.
  const auto layout = OutputLayout::uniform(2, 1024);
  std::vector<uint16_t> ref(static_cast<std::size_t>(layout.elements()));
  for (std::size_t i = 0; i < ref.size(); ++i)
    ref[i] = bf(2.4e-3f * std::sin(static_cast<float>(i)));
  const std::vector<float> zeros(ref.size(), 0.0f);
  const HarnessReport r = harness_check(zeros, ref, layout);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_LE(r.max_error, 2.5e-3f);
}

TEST(CheckHarness, ReportsCountFirstFiveAndMaxError) {
  const auto layout = OutputLayout::uniform(1, 8);
  std::vector<uint16_t> ref(static_cast<std::size_t>(layout.elements()), bf(1.0f));
  std::vector<float> got(ref.size(), 1.0f);
  for (std::size_t i : {3u, 700u, 701u, 702u, 703u, 704u, 705u}) got[i] = 2.0f;
  HarnessReport r = harness_check(got, ref, layout);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 7);
  ASSERT_EQ(r.first.size(), 5u);
  EXPECT_EQ(r.first[0].index, 3);
  EXPECT_EQ(r.first[1].pos.head, 1);  // 700 = head 1, dim 188
  EXPECT_EQ(r.first[1].pos.dim, 188);
  EXPECT_EQ(r.max_error, 1.0f);
  got[9] = kNaN;  // torch.max(diff) is NaN as soon as one diff is
  r = harness_check(got, ref, layout);
  EXPECT_TRUE(std::isnan(r.max_error));
  EXPECT_EQ(r.mismatches, 8);
}

}  // namespace
}  // namespace mlacheck::check
