// ref/round_to.h: the fp16 grid (the others are quant/'s codecs, tested there).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ref/round_to.h"

namespace mlacheck::ref {
namespace {

TEST(RefRoundTo, Fp16Corners) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Row {
    float in, want;
    const char* why;
  };
  const Row rows[] = {
      {1.0f, 1.0f, "exact"},
      {1.0f / 3.0f, 0.333251953125f, "0x3555"},
      {1.0f + 0x1p-11f, 1.0f, "tie to even (down)"},
      {1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-9f, "tie to even (up)"},
      {65504.0f, 65504.0f, "max"},
      {65519.0f, 65504.0f, "below the overflow tie"},
      {65520.0f, inf, "overflow tie rounds to even: Inf"},
      {-1e6f, -inf, "negative overflow"},
      {0x1p-14f, 0x1p-14f, "smallest normal"},
      {0x1p-24f, 0x1p-24f, "smallest subnormal"},
      {0x1p-25f, 0.0f, "half the smallest subnormal: tie to even 0"},
      {3 * 0x1p-26f, 0x1p-24f, "0.75 of it rounds up"},
      {3 * 0x1p-25f, 2 * 0x1p-24f, "1.5 subnormal steps: tie to even 2"},
      {-0.0f, -0.0f, "signed zero"},
  };
  for (const Row& r : rows) {
    const float got = round_to_f16(r.in);
    EXPECT_TRUE(got == r.want && std::signbit(got) == std::signbit(r.want))
        << r.why << ": " << r.in << " -> " << got << ", want " << r.want;
  }
  EXPECT_TRUE(std::isnan(round_to_f16(NAN)));
}

TEST(RefRoundTo, PFormats) {
  EXPECT_EQ(round_to(problem::PFormat::f32, quant::Fp8Format::e4m3fn, 0.3f), 0.3f);
  EXPECT_EQ(round_to(problem::PFormat::bf16, quant::Fp8Format::e4m3fn, 1.0f + 0x1p-9f), 1.0f);
  EXPECT_EQ(round_to(problem::PFormat::fp8, quant::Fp8Format::e4m3fn, 0.96875f), 1.0f);  // tie up
  EXPECT_EQ(round_to(problem::PFormat::fp8, quant::Fp8Format::e4m3fn, 0.90625f), 0.875f);  // tie down
  EXPECT_EQ(round_to(problem::PFormat::fp8, quant::Fp8Format::e4m3fn, 0x1p-10f), 0.0f);  // tie to 0
}

}  // namespace
}  // namespace mlacheck::ref
