// ref/fp8_mma.h: the model of sm_90's fp8 accumulation on sums whose values are known, among them
// the cases GpuWgmma.E4m3AccumulationKeepsTheModelsBits runs on the hardware (one K step, C loaded).
#include <algorithm>
#include <climits>
#include <cmath>
#include <bit>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "quant/fp8.h"
#include "ref/fp8_mma.h"

namespace mlacheck::ref {
namespace {

// The model as its text says it, in double arithmetic term by term (ref/fp8_mma.cpp works on the
// floats' bits in integers): every step exact in double, as the header argues.
float reference(float c, const float* a, const float* b, int64_t n, const Fp8MmaModel& m) {
  const auto exponent = [&](double x) { return std::max(std::ilogb(x), m.factor_min_exponent); };
  double acc = c;
  for (int64_t k0 = 0; k0 < n; k0 += m.group) {
    const int64_t k1 = std::min(n, k0 + m.group);
    int largest = INT32_MIN;
    for (int64_t k = k0; k < k1; ++k)
      if (static_cast<double>(a[k]) * b[k] != 0)
        largest = std::max(largest, m.align_by_factors ? exponent(a[k]) + exponent(b[k])
                                                       : std::ilogb(static_cast<double>(a[k]) * b[k]));
    if (m.align_c && acc != 0) largest = std::max(largest, std::ilogb(acc));
    const auto cut = [&](double x, double unit) {
      const double q = x / unit;
      return (m.toward_floor ? std::floor(q) : std::trunc(q)) * unit;
    };
    double sum = acc;
    if (largest != INT32_MIN) {
      const double unit = std::ldexp(1.0, largest - m.bits);
      sum = 0;
      for (int64_t k = k0; k < k1; ++k) sum += cut(static_cast<double>(a[k]) * b[k], unit);
      sum += m.align_c ? cut(acc, unit) : acc;
    }
    if (sum != 0) {
      const double unit = std::ldexp(1.0, std::ilogb(sum) - m.final_bits);
      sum = (m.final_nearest ? std::nearbyint(sum / unit) : std::trunc(sum / unit)) * unit;
    }
    acc = sum;
  }
  return static_cast<float>(acc);
}

// The model on products given whole (factors p[k] and 1: aligned at p[k]'s own exponent, which
// is the factors' sum for a factor of 1, clamped only below 2^-6).
float accumulate(float c, const float* products, int64_t n, const Fp8MmaModel& m) {
  const std::vector<float> ones(static_cast<std::size_t>(n), 1.0f);
  return fp8_mma_accumulate(c, products, ones.data(), n, m);
}

Fp8MmaModel with_bits(int bits, int final_bits) {
  Fp8MmaModel m = kSm90Fp8Mma;
  m.bits = bits;
  m.final_bits = final_bits;
  return m;
}

// The first r in [0, 24) whose C + {products} is not exact (-1: none).
template <class C, class P>
int first_inexact(const Fp8MmaModel& m, C c_of, P products_of) {
  for (int r = 0; r < 24; ++r) {
    const std::vector<float> p = products_of(r);
    const double c = c_of(r);
    double exact = c;
    for (float x : p) exact += x;
    if (static_cast<double>(accumulate(static_cast<float>(c), p.data(),
                                               static_cast<int64_t>(p.size()), m)) != exact)
      return r;
  }
  return -1;
}

TEST(RefFp8Mma, SmallAddendKeptWhileWithinTheBits) {
  // C = 2^r plus the product 1: 1 stays on the grid 2^(r - bits) while r <= bits.
  for (int bits : {13, 14}) {
    const auto m = with_bits(bits, 23);
    EXPECT_EQ(first_inexact(m, [](int r) { return std::ldexp(1.0, r); },
                            [](int) { return std::vector<float>{1.0f}; }),
              bits + 1);
    // C = -2^r plus 1 (toward zero), and two products 2^16 and 2^(16 - g) in one step with C = 0.
    EXPECT_EQ(first_inexact(m, [](int r) { return -std::ldexp(1.0, r); },
                            [](int) { return std::vector<float>{1.0f}; }),
              bits + 1);
    EXPECT_EQ(first_inexact(m, [](int) { return 0.0; },
                            [](int g) {
                              return std::vector<float>{0x1p16f, std::ldexp(1.0f, 16 - g)};
                            }),
              bits + 1);
  }
}

TEST(RefFp8Mma, CutDirectionAndAccumulatorWidth) {
  const float one = 1.0f;
  Fp8MmaModel floor = with_bits(13, 23);
  floor.toward_floor = true;
  // C = -1 - 2^-20 aligned to 2^0 with 13 bits: toward zero -1, toward -inf -1 - 2^-13.
  EXPECT_EQ(accumulate(-1.0f - 0x1p-20f, &one, 1, with_bits(13, 23)), 0.0f);
  EXPECT_EQ(accumulate(-1.0f - 0x1p-20f, &one, 1, floor), -0x1p-13f);
  // A wide alignment keeps C whole; the accumulator's own width then decides.
  const float zero = 0.0f;
  EXPECT_EQ(accumulate(1.0f + 0x1p-20f, &zero, 1, with_bits(24, 13)), 1.0f);
  EXPECT_EQ(accumulate(1.0f + 0x1p-20f, &zero, 1, with_bits(24, 23)), 1.0f + 0x1p-20f);
  Fp8MmaModel nearest = with_bits(24, 13);
  nearest.final_nearest = true;
  EXPECT_EQ(accumulate(1.0f + 0x1p-14f + 0x1p-20f, &zero, 1, nearest), 1.0f + 0x1p-13f);
  // C not aligned: added after the products' aligned sum, then cut to the accumulator's width.
  Fp8MmaModel after = with_bits(13, 23);
  after.align_c = false;
  EXPECT_EQ(accumulate(0x1p20f, &one, 1, after), 0x1p20f + 1.0f);
  EXPECT_EQ(accumulate(0x1p20f, &one, 1, with_bits(13, 23)), 0x1p20f);
  // Groups of 8 aligned apart (C not aligned): 2^-4 in the second group survives 2^10 in the first.
  std::vector<float> two(32, 0.0f);
  two[0] = 0x1p10f;
  two[8] = 0x1p-4f;
  EXPECT_EQ(accumulate(0.0f, two.data(), 32, after), 0x1p10f);
  after.group = 8;
  EXPECT_EQ(accumulate(0.0f, two.data(), 32, after), 0x1p10f + 0x1p-4f);
}

TEST(RefFp8Mma, StepsOfThirtyTwoAndWideModelsAreFloat32) {
  // Wide enough to hold every term, the model is the float32 rounding (truncated) of each step's
  // exact sum, step by step: 64 products are two steps, the second taking the first's result.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> code(-15, 15), expo(-6, 6);
  std::vector<float> p(64);
  for (float& x : p) x = std::ldexp(static_cast<float>(code(rng)), expo(rng));
  const Fp8MmaModel wide = with_bits(40, 23);
  const float first = accumulate(0.0f, p.data(), 32, wide);
  double sum = 0;
  for (int k = 0; k < 32; ++k) sum += p[static_cast<std::size_t>(k)];
  EXPECT_EQ(static_cast<double>(first), sum);  // integers times 2^-6 .. 2^6: exact in float32
  EXPECT_EQ(accumulate(first, p.data() + 32, 32, wide), accumulate(0.0f, p.data(), 64, wide));
  // The default model loses what lies 13 bits below a step's largest term.
  std::vector<float> spread(32, 0x1p-10f);
  spread[0] = 0x1p4f;
  EXPECT_EQ(accumulate(0.0f, spread.data(), 32, kSm90Fp8Mma), 0x1p4f);
  EXPECT_EQ(accumulate(0.0f, spread.data(), 32, with_bits(14, 23)), 0x1p4f + 31 * 0x1p-10f);
}

// The alignment the probe measured (ref/fp8_mma.h): a product at its factors' exponents summed,
// an e4m3 subnormal factor at its field's exponent, -6 (kSm90Fp8Mma), not at its own.
TEST(RefFp8Mma, ProductsAlignAtTheirFactorsExponents) {
  // 1.875 x 3.75 = 7.03125 (exponent 2) aligns at 0 + 1 = 1: two products 2^-6 x 2^-6 = 2^-12 stay
  // on its grid of 2^(1 - 13); aligned at its own exponent (grid 2^-11) they are cut.
  const float a[] = {1.875f, 0x1p-6f, 0x1p-6f}, b[] = {3.75f, 0x1p-6f, 0x1p-6f};
  EXPECT_EQ(fp8_mma_accumulate(0.0f, a, b, 3, kSm90Fp8Mma), 7.03125f + 0x1p-11f);
  Fp8MmaModel own = kSm90Fp8Mma;
  own.align_by_factors = false;
  EXPECT_EQ(fp8_mma_accumulate(0.0f, a, b, 3, own), 7.03125f);
  // e4m3's smallest subnormal 2^-9 times 448 (1.75 x 2^8) = 0.875 aligns at -6 + 8 = 2, which cuts
  // the two 2^-12; at the subnormal's own exponent, -9 + 8 = -1, they stay.
  const float sa[] = {0x1p-9f, 0x1p-6f, 0x1p-6f}, sb[] = {448.0f, 0x1p-6f, 0x1p-6f};
  EXPECT_EQ(fp8_mma_accumulate(0.0f, sa, sb, 3, kSm90Fp8Mma), 0.875f);
  Fp8MmaModel own_subnormal = kSm90Fp8Mma;
  own_subnormal.factor_min_exponent = INT_MIN;
  EXPECT_EQ(fp8_mma_accumulate(0.0f, sa, sb, 3, own_subnormal), 0.875f + 0x1p-11f);
  // And the arguments it refuses.
  Fp8MmaModel bad = kSm90Fp8Mma;
  bad.bits = 45;
  EXPECT_THROW((void)fp8_mma_accumulate(0.0f, a, b, 3, bad), std::invalid_argument);
  bad = kSm90Fp8Mma;
  bad.group = 65;
  EXPECT_THROW((void)fp8_mma_accumulate(0.0f, a, b, 3, bad), std::invalid_argument);
}

// Every model of the fit's search (docs/probes/fp8_accumulation_fit.py) on random fp8 x fp8
// products (every exponent spread, zeros, subnormal codes) and a C of any size: the bit-level
// implementation equals the double one bit for bit.
TEST(RefFp8Mma, BitLevelSumsEqualTheModelInDouble) {
  std::mt19937 rng(20261205u);
  const auto e4m3 = [&](int spread) {  // a random e4m3fn value, exponent within `spread` of 2^0
    const int e = 7 + static_cast<int>(rng() % static_cast<unsigned>(2 * spread + 1)) - spread;
    const int m = static_cast<int>(rng() % 8);
    const float v = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
    return rng() % 8 == 0 ? 0.0f : (rng() % 2 ? -v : v);
  };
  // How a product aligns: at its own exponent, at its factors' (a subnormal's own), at its
  // factors' (a subnormal's field).
  struct Alignment {
    bool by_factors;
    int min_exponent;
  };
  const Alignment alignments[] = {{false, INT_MIN}, {true, INT_MIN}, {true, kE4m3MinExponent}};
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int spread = trial % 8;
    std::vector<float> a(64), b(64);
    for (std::size_t k = 0; k < a.size(); ++k) {
      a[k] = e4m3(spread);
      b[k] = e4m3(spread);
    }
    const int c_exp = static_cast<int>(rng() % 60) - 30;
    const float c = trial % 4 == 0 ? 0.0f
                                   : std::ldexp(1.0f + static_cast<float>(rng() % (1u << 23)) / 0x1p23f, c_exp) *
                                         (rng() % 2 ? -1.0f : 1.0f);
    for (int bits : {12, 13, 14, 16, 24, 30})
      for (int final_bits : {13, 23})
        for (bool align : {true, false})
          for (bool floor : {false, true})
            for (bool nearest : {false, true})
              for (int group : {32, 16, 8, 4})
                for (const Alignment& at : alignments) {
                  const Fp8MmaModel m{.bits = bits, .final_bits = final_bits, .align_c = align,
                                      .toward_floor = floor, .final_nearest = nearest, .group = group,
                                      .align_by_factors = at.by_factors, .factor_min_exponent = at.min_exponent};
                  const float got = fp8_mma_accumulate(c, a.data(), b.data(), 64, m);
                  const float want = reference(c, a.data(), b.data(), 64, m);
                  ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
                      << "trial " << trial << " bits " << bits << " final " << final_bits << " align " << align
                      << " floor " << floor << " nearest " << nearest << " group " << group << " by factors "
                      << at.by_factors << " min exponent " << at.min_exponent << ": " << got << " vs " << want;
                  ++checked;
                }
  }
  EXPECT_EQ(checked, 400 * 6 * 2 * 2 * 2 * 2 * 4 * 3);
}

// e4m3_factor_exponents on every e4m3fn code: each finite value is accepted with its alignment
// exponent (max(floor(log2 |x|), -6), or kZeroFactorExponent for ±0); NaN and values off the grid
// or past the max are refused.
TEST(RefFp8Mma, E4m3FactorExponentsOfEveryCode) {
  for (int code = 0; code < 256; ++code) {
    const float x = quant::fp8_to_f32(static_cast<uint8_t>(code), quant::Fp8Format::e4m3fn);
    int32_t e = 0;
    const bool ok = e4m3_factor_exponents(&x, 1, &e);
    if (std::isnan(x)) {
      EXPECT_FALSE(ok) << "code 0x" << std::hex << code;
      continue;
    }
    EXPECT_TRUE(ok) << "code 0x" << std::hex << code;
    EXPECT_EQ(e, x == 0 ? kZeroFactorExponent : std::max(std::ilogb(x), kE4m3MinExponent))
        << "code 0x" << std::hex << code;
  }
  for (const float x : {1.0625f, -0x1p-10f, 449.0f, 480.0f, INFINITY}) {
    int32_t e = 0;
    EXPECT_FALSE(e4m3_factor_exponents(&x, 1, &e)) << x;
  }
}

// fp8_mma_accumulate_e4m3 equals fp8_mma_accumulate under kSm90Fp8Mma bit for bit, lane by lane:
// random e4m3fn operands (every exponent spread, zeros, subnormal codes, whole zero steps), widths
// around the K step, strided operands, and a C of any size on each lane: 0 and -0, float
// subnormals, the largest floats (the lanes the fast path hands back to the general form).
TEST(RefFp8Mma, E4m3LanesEqualTheGeneralForm) {
  std::mt19937 rng(20261205u);
  const auto e4m3 = [&](int spread, int zeros) {  // exponent within `spread` of 2^0; 1 in `zeros` 0
    const int e = 7 + static_cast<int>(rng() % static_cast<unsigned>(2 * spread + 1)) - spread;
    const int m = std::min(static_cast<int>(rng() % 8), e >= 15 ? 6 : 7);  // 0x7F: NaN, not 480
    const float v = e <= 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
    return rng() % static_cast<unsigned>(zeros) == 0 ? 0.0f : (rng() % 2 ? -v : v);
  };
  const auto any_c = [&]() {
    switch (rng() % 8) {
      case 0: return 0.0f;
      case 1: return -0.0f;
      case 2: return std::ldexp(static_cast<float>(rng() % 1000 + 1), -149);  // subnormal
      case 3: return (rng() % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f + static_cast<float>(rng() % 8388608) / 0x1p23f,
                                                            static_cast<int>(rng() % 250) - 124);
      default:
        return (rng() % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f + static_cast<float>(rng() % 8388608) / 0x1p23f,
                                                      static_cast<int>(rng() % 40) - 20);
    }
  };
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int spread = trial % 9;
    const int zeros = trial % 5 == 0 ? 2 : trial % 7 == 0 ? 1000000 : 8;
    const int64_t n = std::vector<int64_t>{1, 7, 31, 32, 33, 64, 100}[static_cast<std::size_t>(trial % 7)];
    const int64_t a_stride = trial % 2 ? 1 : 3, ldb = trial % 3 ? kFp8MmaLanes : kFp8MmaLanes + 5;
    std::vector<float> a(static_cast<std::size_t>(n * a_stride)), b(static_cast<std::size_t>(n * ldb));
    for (float& x : a) x = e4m3(spread, zeros);
    for (float& x : b) x = e4m3(spread, zeros);
    if (trial % 11 == 0)  // a whole zero K step in a
      for (int64_t k = 0; k < std::min<int64_t>(n, kFp8MmaKStep); ++k) a[static_cast<std::size_t>(k * a_stride)] = 0;
    std::vector<int32_t> ea(a.size()), eb(b.size());
    ASSERT_TRUE(e4m3_factor_exponents(a.data(), static_cast<int64_t>(a.size()), ea.data()));
    ASSERT_TRUE(e4m3_factor_exponents(b.data(), static_cast<int64_t>(b.size()), eb.data()));
    float c[kFp8MmaLanes];
    for (float& x : c) x = any_c();
    float got[kFp8MmaLanes];
    std::copy(c, c + kFp8MmaLanes, got);
    fp8_mma_accumulate_e4m3(got, a.data(), ea.data(), a_stride, b.data(), eb.data(), ldb, n);
    for (int j = 0; j < kFp8MmaLanes; ++j) {
      std::vector<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
      for (int64_t k = 0; k < n; ++k) {
        x[static_cast<std::size_t>(k)] = a[static_cast<std::size_t>(k * a_stride)];
        y[static_cast<std::size_t>(k)] = b[static_cast<std::size_t>(k * ldb + j)];
      }
      const float want = fp8_mma_accumulate(c[j], x.data(), y.data(), n, kSm90Fp8Mma);
      ASSERT_EQ(std::bit_cast<uint32_t>(got[j]), std::bit_cast<uint32_t>(want))
          << "trial " << trial << " lane " << j << " n " << n << " C " << c[j] << ": " << got[j] << " vs " << want;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3000 * kFp8MmaLanes);
}

}  // namespace
}  // namespace mlacheck::ref
