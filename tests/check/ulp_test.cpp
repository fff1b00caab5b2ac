// bf16 ulp distances and spacing, and the histogram buckets.
#include "check/ulp.h"

#include <gtest/gtest.h>

#include <cmath>

#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

TEST(CheckBf16Ulp, DistanceCountsRepresentableSteps) {
  EXPECT_EQ(bf16_ulp_distance(0x3F80, 0x3F80), 0u);  // 1.0
  EXPECT_EQ(bf16_ulp_distance(0x3F80, 0x3F81), 1u);  // 1.0 and the next value up
  EXPECT_EQ(bf16_ulp_distance(0x3F81, 0x3F80), 1u);
  EXPECT_EQ(bf16_ulp_distance(0x3F7F, 0x3F81), 2u);  // across the binade boundary at 1.0
  EXPECT_EQ(bf16_ulp_distance(0x0000, 0x8000), 0u);  // +0 and -0 are the same value
  EXPECT_EQ(bf16_ulp_distance(0x0001, 0x8001), 2u);  // smallest subnormals either side of 0
  EXPECT_EQ(bf16_ulp_distance(0xBF80, 0x3F80), 2u * 0x3F80u);  // -1 to 1
  EXPECT_EQ(bf16_ulp_distance(0x7F7F, 0x7F80), 1u);            // max finite to +Inf
}

TEST(CheckBf16Ulp, SpacingOfTheBinade) {
  EXPECT_EQ(bf16_ulp(1.0), std::ldexp(1.0, -7));
  EXPECT_EQ(bf16_ulp(1.99), std::ldexp(1.0, -7));
  EXPECT_EQ(bf16_ulp(-2.0), std::ldexp(1.0, -6));
  EXPECT_EQ(bf16_ulp(6e-4), std::ldexp(1.0, -11 - 7));  // 2^-11 <= 6e-4 < 2^-10
  EXPECT_EQ(bf16_ulp(0.0), std::ldexp(1.0, -133));      // the subnormal step
  EXPECT_EQ(bf16_ulp(1e-40), std::ldexp(1.0, -133));
  // The spacing is the distance to the next bf16 value, for every positive finite pattern.
  for (uint32_t b = 0x0001; b < 0x7F7F; b += 97) {
    const auto bits = static_cast<uint16_t>(b);
    const double gap = double{quant::bf16_to_f32(static_cast<uint16_t>(bits + 1))} -
                       double{quant::bf16_to_f32(bits)};
    ASSERT_EQ(bf16_ulp(quant::bf16_to_f32(bits)), gap) << std::hex << b;
  }
}

TEST(CheckUlpHistogram, PowerOfTwoBuckets) {
  EXPECT_EQ(UlpHistogram::bucket(0), 0);
  EXPECT_EQ(UlpHistogram::bucket(1), 1);
  EXPECT_EQ(UlpHistogram::bucket(2), 2);
  EXPECT_EQ(UlpHistogram::bucket(3), 3);
  EXPECT_EQ(UlpHistogram::bucket(4), 3);
  EXPECT_EQ(UlpHistogram::bucket(5), 4);
  EXPECT_EQ(UlpHistogram::bucket(8), 4);
  EXPECT_EQ(UlpHistogram::bucket(2 * 0x7F80), UlpHistogram::kBuckets - 1);  // largest distance
  EXPECT_EQ(UlpHistogram::label(0), "0");
  EXPECT_EQ(UlpHistogram::label(3), "3-4");
  EXPECT_EQ(UlpHistogram::label(4), "5-8");
  UlpHistogram h;
  for (uint32_t u : {0u, 0u, 1u, 4u, 7u}) h.add(u);
  EXPECT_EQ(h.count[0], 2);
  EXPECT_EQ(h.count[1], 1);
  EXPECT_EQ(h.count[3], 1);
  EXPECT_EQ(h.count[4], 1);
  EXPECT_EQ(h.max, 7u);
}

}  // namespace
}  // namespace mlacheck::check
