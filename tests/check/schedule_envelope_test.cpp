// check/schedule_envelope.h: the output may lie kEnvelopeFactor times as far from the single pass
// as the farthest correct schedule (plus a floor), a row may be scaled by up to its row-sum
// rounding, only the sampled tokens count, and a non-finite sampled element fails.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "check/layout.h"
#include "check/schedule_envelope.h"
#include "check/ulp.h"
#include "problem/shape.h"

namespace mlacheck::check {
namespace {

constexpr int64_t kRow = problem::kNumHeads * kRowLen;  // one token's values

// 4 tokens with 50 keys each; tokens 1 and 3 sampled.
struct Fixture {
  OutputLayout layout{{0, 1, 2, 3}, {50, 50, 50, 50}};
  std::vector<float> single;
  EnvelopeControls controls;
  std::mt19937 rng{7};

  Fixture() {
    std::normal_distribution<float> n(0.0f, 1.0f);
    single.resize(static_cast<std::size_t>(4 * kRow));
    for (float& x : single) x = n(rng);
    controls.tokens = {1, 3};
    controls.controls.push_back({"near", noisy_sample(0.01)});
    controls.controls.push_back({"far", noisy_sample(0.02)});
  }
  // The sampled tokens' single-pass values plus Gaussian noise of relative size `sigma`.
  std::vector<float> noisy_sample(double sigma) {
    std::normal_distribution<double> n(0.0, sigma);
    std::vector<float> out;
    for (int64_t t : controls.tokens)
      for (int64_t i = t * kRow; i < (t + 1) * kRow; ++i)
        out.push_back(static_cast<float>(single[static_cast<std::size_t>(i)] + n(rng)));
    return out;
  }
  // Every token's values plus noise of relative size `sigma`.
  std::vector<float> noisy(double sigma) {
    std::normal_distribution<double> n(0.0, sigma);
    std::vector<float> out(single);
    for (float& x : out) x = static_cast<float>(x + n(rng));
    return out;
  }
};

TEST(ScheduleEnvelope, AcceptsWithinTheFactorOfTheFarthestControlAndRejectsBeyond) {
  Fixture f;
  const EnvelopeReport control_like = check_envelope(f.noisy(0.02), f.single, f.layout, f.controls);
  EXPECT_EQ(control_like.farthest_schedule, "far");
  EXPECT_NEAR(control_like.farthest_control, 0.02, 0.002);
  EXPECT_NEAR(control_like.output_distance, 0.02, 0.002);
  EXPECT_GT(control_like.floor, 0.0);
  EXPECT_LT(control_like.floor, 0.0015);  // an eighth of a bf16 ulp of values ~1, relative
  EXPECT_TRUE(control_like.pass());
  EXPECT_TRUE(check_envelope(f.noisy(0.035), f.single, f.layout, f.controls).pass());
  const EnvelopeReport far = check_envelope(f.noisy(0.06), f.single, f.layout, f.controls);
  EXPECT_FALSE(far.pass());
  EXPECT_EQ(far.rows, 2 * problem::kNumHeads);
  EXPECT_EQ(far.tokens_sampled, 2);
  EXPECT_EQ(far.tokens_total, 4);
}

TEST(ScheduleEnvelope, OnlyTheSampledTokensCount) {
  Fixture f;
  std::vector<float> out = f.single;
  for (int64_t i = 0; i < kRow; ++i) out[static_cast<std::size_t>(i)] *= 3;  // token 0: not sampled
  out[static_cast<std::size_t>(2 * kRow)] = std::numeric_limits<float>::quiet_NaN();  // token 2
  EXPECT_TRUE(check_envelope(out, f.single, f.layout, f.controls).pass());
  out[static_cast<std::size_t>(3 * kRow + 5)] = std::numeric_limits<float>::quiet_NaN();  // sampled
  const EnvelopeReport r = check_envelope(out, f.single, f.layout, f.controls);
  EXPECT_EQ(r.non_finite, 1);
  EXPECT_FALSE(r.pass());
}

// A kernel that sums l from the rounded P scales each row by up to its row_sum_rounding delta.
TEST(ScheduleEnvelope, ARowScaledWithinItsRowSumRoundingIsNotAnError) {
  Fixture f;
  f.controls.row_sum_rounding.assign(static_cast<std::size_t>(4 * problem::kNumHeads), 0.08f);
  std::vector<float> scaled = f.single;
  for (float& x : scaled) x *= 1.07f;  // 7 %, 3.5 x the farthest control, within delta
  EXPECT_TRUE(check_envelope(scaled, f.single, f.layout, f.controls).pass());
  for (float& x : scaled) x *= 1.07f;  // 14.5 %: 6.5 % beyond delta
  EXPECT_FALSE(check_envelope(scaled, f.single, f.layout, f.controls).pass());
  f.controls.row_sum_rounding.assign(f.controls.row_sum_rounding.size(), 0.0f);  // f32 P: no delta
  std::vector<float> slightly = f.single;
  for (float& x : slightly) x *= 1.07f;
  EXPECT_FALSE(check_envelope(slightly, f.single, f.layout, f.controls).pass());
}

// Where every control equals the single pass (f32 P), the floor still lets a kernel's own output
// rounding differ by an ulp here and there, not everywhere.
TEST(ScheduleEnvelope, TheFloorCoversOutputRoundingWhereTheControlsAreExact) {
  Fixture f;
  for (EnvelopeControls::Control& c : f.controls.controls) c.values = f.noisy_sample(0.0);
  std::vector<float> out = f.single;
  for (std::size_t i = 0; i < out.size(); i += 100)  // one in 100 a bf16 ulp off
    out[i] = static_cast<float>(out[i] + bf16_ulp(out[i]));
  const EnvelopeReport r = check_envelope(out, f.single, f.layout, f.controls);
  EXPECT_EQ(r.farthest_control, 0.0);
  EXPECT_TRUE(r.pass()) << r.output_distance << " vs floor " << r.floor;
  EXPECT_FALSE(check_envelope(f.noisy(0.01), f.single, f.layout, f.controls).pass());
}

TEST(ScheduleEnvelope, MismatchedSizesAreErrors) {
  Fixture f;
  f.controls.controls[0].values.pop_back();
  EXPECT_THROW(check_envelope(f.single, f.single, f.layout, f.controls), std::invalid_argument);
}

}  // namespace
}  // namespace mlacheck::check
