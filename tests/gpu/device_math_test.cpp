// gpu/common/device_math.h and rounding.h on the host (every build): the kernels' float32
// softmax functions and roundings against the reference's (ref/detmath.h, ref/round_to.h). The
// two are written independently (DESIGN.md: the reference shares no code with the kernels), so
// these tests are what says that the kernels' exp, log and P rounding are the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu/common/device_math.h"
#include "gpu/common/exact_quotient.h"
#include "gpu/common/rounding.h"
#include "problem/recipe.h"
#include "quant/bits.h"
#include "ref/detmath.h"
#include "ref/round_to.h"

namespace mlacheck::gpu::common {
namespace {

float ref_exp(bool base2, float x) {
  const double d = x;
  return static_cast<float>(base2 ? ref::detmath::exp2(d) : ref::detmath::exp(d));
}
float ref_log(bool base2, float x) {
  const double d = x;
  return static_cast<float>(base2 ? ref::detmath::log2(d) : ref::detmath::log(d));
}

bool same(float a, float b) {
  return quant::f32_bits(a) == quant::f32_bits(b) || (std::isnan(a) && std::isnan(b));
}

std::string hex(float x) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", quant::f32_bits(x));
  return text;
}

// Every `stride`-th float32 bit pattern from `first` to `last` (inclusive, same sign).
template <typename F>
void sweep(uint32_t first, uint32_t last, uint32_t stride, F&& f) {
  for (uint64_t u = first; u <= last; u += stride) f(quant::f32_from_bits(static_cast<uint32_t>(u)));
}

TEST(GpuDeviceMath, ExpMatchesTheReferenceOnTheSoftmaxRange) {
  // x = s - max <= 0 in the softmax and the merge; a stride over every binade from -0 to -inf,
  // and the positive side up to overflow for completeness.
  for (const bool base2 : {false, true}) {
    int64_t checked = 0, wrong = 0;
    const auto check = [&](float x) {
      ++checked;
      const float got = exp_base(base2, x), want = ref_exp(base2, x);
      if (!same(got, want) && ++wrong <= 5)
        ADD_FAILURE() << (base2 ? "2^" : "e^") << x << " (" << hex(x) << "): " << hex(got)
                      << " vs reference " << hex(want);
    };
    sweep(0x80000000u, 0xFF800000u, 997, check);  // -0 .. -inf
    sweep(0x00000000u, 0x43000000u, 997, check);  // +0 .. 128
    check(std::numeric_limits<float>::quiet_NaN());
    EXPECT_EQ(wrong, 0) << "of " << checked;
  }
}

TEST(GpuDeviceMath, LogMatchesTheReference) {
  // l >= 1 in the kernels (the largest term is b^0 = 1); also below 1, subnormals, 0 and inf.
  for (const bool base2 : {false, true}) {
    int64_t checked = 0, wrong = 0;
    const auto check = [&](float x) {
      ++checked;
      const float got = log_base(base2, x), want = ref_log(base2, x);
      if (!same(got, want) && ++wrong <= 5)
        ADD_FAILURE() << (base2 ? "log2 " : "ln ") << x << " (" << hex(x) << "): " << hex(got)
                      << " vs reference " << hex(want);
    };
    sweep(0x00000000u, 0x7F800000u, 613, check);
    EXPECT_EQ(wrong, 0) << "of " << checked;
  }
  EXPECT_TRUE(std::isnan(log_base(false, -1.0f)));
}

TEST(GpuDeviceMath, NaturalLseOfBaseTwo) {
  for (const float lse : {0.0f, 1.0f, 10.5f, -3.25f, 1e-30f}) {
    const auto want = static_cast<float>(static_cast<double>(lse) * ref::detmath::detail::kLn2);
    EXPECT_TRUE(same(natural_lse(true, lse), want)) << lse;
    EXPECT_TRUE(same(natural_lse(false, lse), lse)) << lse;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(natural_lse(true, -inf), -inf);
}

// exact_quotient against IEEE division (the host's a / b), bit for bit, in its window: random
// divisors over every binade of the window and the row sums kernels see (1 .. 2^20), random
// dividends, and dividends whose quotient lies next to a rounding midpoint of float32 (a = RN(b m)
// for m a midpoint between two floats), where a wrong last step shows. The same sum without its
// correction (RN(a r)) must miss some of them, or the cases could not see a missing step.
TEST(GpuDeviceMath, ExactQuotientIsIeeeDivisionInItsWindow) {
  std::mt19937 rng(20261203);
  const auto in_window = [&](int lo_exp, int hi_exp) {  // a random float with |x| in [2^lo, 2^hi)
    std::uniform_int_distribution<int> exp(lo_exp, hi_exp - 1);
    std::uniform_int_distribution<uint32_t> mant(0, (1u << 23) - 1), sign(0, 1);
    return quant::f32_from_bits((sign(rng) << 31) | (static_cast<uint32_t>(exp(rng) + 127) << 23) | mant(rng));
  };
  std::vector<float> divisors = {1.0f, 3.0f, 7.0f, 64.0f, 8192.0f, 0x1.fffffep0f, 0x1.000002p0f,
                                 0x1p-60f, 0x1.fffffep59f, -0x1p-60f, -5.5f};
  for (int i = 0; i < 1500; ++i) divisors.push_back(in_window(-60, 60));
  for (int i = 0; i < 1500; ++i) divisors.push_back(std::fabs(in_window(0, 20)));  // row sums
  int64_t checked = 0, wrong = 0, uncorrected_wrong = 0;
  const auto check = [&](float a, float b) {
    if (!dividend_in_window(a) || !std::isfinite(a / b)) return;
    ++checked;
    const ExactDivisor d = exact_divisor(b);
    const float got = exact_quotient(a, d), want = a / b;
    if (!same(got, want) && ++wrong <= 5)
      ADD_FAILURE() << hex(a) << " / " << hex(b) << ": " << hex(got) << " vs IEEE " << hex(want);
    if (!same(a * d.r, want)) ++uncorrected_wrong;
  };
  std::uniform_int_distribution<uint32_t> mant(0, (1u << 23) - 1);
  for (const float b : divisors) {
    ASSERT_TRUE(divisor_in_window(b)) << hex(b);
    for (const float a : {0.0f, -0.0f, 0x1p-60f, -0x1.fffffep59f, b, -b}) check(a, b);
    for (int i = 0; i < 2000; ++i) check(in_window(-60, 60), b);
    for (int i = 0; i < 1000; ++i) {
      // q a float in [1, 2) times 2^k with q b in the window; m = q + ulp(q)/2 in double; a = RN(b m).
      const double q = 1.0 + static_cast<double>(mant(rng)) * 0x1p-23 + 0x1p-24;
      const int k = std::uniform_int_distribution<int>(-30, 30)(rng);
      const float a = static_cast<float>(static_cast<double>(b) * std::ldexp(q, k));
      check(a, b);
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << checked;
  EXPECT_GT(uncorrected_wrong, checked / 100) << "RN(a r) alone agreed with IEEE division too often";
  // Outside the window the caller divides.
  for (const float x : {0.0f, 0x1p-61f, 0x1p60f, std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), 0x1p-130f})
    EXPECT_FALSE(divisor_in_window(x)) << hex(x);
  EXPECT_TRUE(dividend_in_window(-0.0f));
  EXPECT_FALSE(dividend_in_window(std::numeric_limits<float>::quiet_NaN()));
}

TEST(GpuRounding, EveryBf16AndASweepMatchTheReference) {
  int64_t wrong = 0;
  const auto check = [&](float x) {
    for (const quant::Fp8Format f : {quant::Fp8Format::e4m3fn, quant::Fp8Format::e4m3fnuz}) {
      const float got[] = {round_to_p<problem::PFormat::bf16>(x, f),
                           round_to_p<problem::PFormat::f16>(x, f),
                           round_to_p<problem::PFormat::fp8>(x, f),
                           round_to_p<problem::PFormat::f32>(x, f)};
      const float want[] = {ref::round_to(problem::PFormat::bf16, f, x),
                            ref::round_to(problem::PFormat::f16, f, x),
                            ref::round_to(problem::PFormat::fp8, f, x),
                            ref::round_to(problem::PFormat::f32, f, x)};
      for (int i = 0; i < 4; ++i)
        if (!same(got[i], want[i]) && ++wrong <= 5)
          ADD_FAILURE() << "P format #" << i << " of " << hex(x) << ": " << hex(got[i]) << " vs "
                        << hex(want[i]);
    }
  };
  for (uint32_t b = 0; b <= 0xFFFFu; ++b) check(quant::f32_from_bits(b << 16));
  sweep(0x00000000u, 0x7F800000u, 4099, check);
  sweep(0x80000000u, 0xFF800000u, 4099, check);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace mlacheck::gpu::common
