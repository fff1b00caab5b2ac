// gpu/mma/mma.h's tile layer on a device (through gpu/mma/mma_check.h): every product against a
// double-precision reference on random operands loaded from padded shared memory, results written
// through TileC::get_i / get_j; e4m3fn -> bf16 and -> f16 pairs over all 65536 inputs;
// async_copy_16's zero-fill.
//
// Tolerance of the products. Every product of two bf16, f16, e4m3 or e2m1 values (times E8M0
// powers of two) is exact in float32: at most 11 + 11 significant bits, exponents far inside
// float32's range. The only error is the float32 summation of the K products of an element, in
// whatever order and grouping the hardware uses. Each rounded addition (to nearest, or toward zero
// as tensor cores do) errs by less than one ulp of its result, at most 2^-23 |partial sum|, and a
// partial sum is at most T = sum |a_k b_k|; a multi-operand adder that aligns and truncates each
// addend loses up to one more ulp per addend. Hence |d - exact| <= K 2^-22 T, far below what a
// wrong layout, operand or k offset gives on random data (an error of the order of |exact|).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/common/operand_decode.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/mma/mma_check.h"
#include "gpu/platform.h"
#include "quant/bits.h"
#include "tests/gpu/half_values.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#endif

namespace mlacheck::gpu {
namespace {

#if defined(MLACHECK_HAVE_GPU_RUNTIME)

constexpr unsigned kSeed = 20261130;

// D = A · Bᵀ in double: a is m x k, b is n x k (or k x n when b_kn), values already decoded.
struct Reference {
  std::vector<double> d;    // m x n
  std::vector<double> abs;  // T = sum |a_k b_k| per element
};
Reference reference(const std::vector<double>& a, const std::vector<double>& b, int m, int n,
                    int k, bool b_kn) {
  Reference r{std::vector<double>(static_cast<std::size_t>(m) * n),
              std::vector<double>(static_cast<std::size_t>(m) * n)};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0, t = 0.0;
      for (int q = 0; q < k; ++q) {
        const double p = a[static_cast<std::size_t>(i) * k + q] *
                         b[b_kn ? static_cast<std::size_t>(q) * n + j
                                : static_cast<std::size_t>(j) * k + q];
        s += p;  // double: its rounding (< K 2^-53 T) is negligible beside the bound
        t += std::fabs(p);
      }
      r.d[static_cast<std::size_t>(i) * n + j] = s;
      r.abs[static_cast<std::size_t>(i) * n + j] = t;
    }
  return r;
}

// Compares a device product with the reference under the bound above; names the worst element.
void expect_product(const std::string& what, const std::vector<float>& got, const Reference& ref,
                    int n, int k) {
  ASSERT_EQ(got.size(), ref.d.size()) << what;
  const double unit = std::ldexp(1.0, -22) * k;
  int wrong = 0;
  double worst = 0.0;  // in units of 2^-24 T
  for (std::size_t e = 0; e < got.size(); ++e) {
    const double err = std::fabs(static_cast<double>(got[e]) - ref.d[e]);
    if (std::isnan(got[e])) {
      if (++wrong <= 5)
        ADD_FAILURE() << what << ": D[" << e / n << "][" << e % n
                      << "] never written (NaN poison): TileC::get_i / get_j miss it";
      continue;
    }
    if (ref.abs[e] > 0.0) worst = std::max(worst, err / (std::ldexp(1.0, -24) * ref.abs[e]));
    if (err > unit * ref.abs[e] && ++wrong <= 5)
      ADD_FAILURE() << what << ": D[" << e / n << "][" << e % n << "] = " << got[e]
                    << ", exact " << ref.d[e] << " (error " << err << ", bound "
                    << unit * ref.abs[e] << " = K 2^-22 sum|a b|)";
  }
  EXPECT_EQ(wrong, 0) << what << " (seed " << kSeed << "; worst error " << worst
                      << " x 2^-24 sum|a b|)";
}

// Random bf16: random sign and mantissa, exponents 2^-8 .. 2^8 so that the sums align.
uint16_t random_bf16(std::mt19937& rng) {
  const uint32_t sign = rng() & 1u, exp = 127u - 8u + rng() % 17u, mant = rng() & 0x7Fu;
  return static_cast<uint16_t>((sign << 15) | (exp << 7) | mant);
}
using test::bf16_value;
using test::f16_value;

// Random f16: exponents 2^-10 .. 2^10, one in 16 a subnormal.
uint16_t random_f16(std::mt19937& rng) {
  const uint32_t sign = rng() & 1u, mant = rng() & 0x3FFu;
  const uint32_t exp = rng() % 16u == 0 ? 0u : 15u - 10u + rng() % 21u;
  return static_cast<uint16_t>((sign << 15) | (exp << 10) | mant);
}

struct Layer {
  MmaLayerInfo info;
  int n_total() const { return kMmaCheckTiles * info.n; }
};
Layer layer() { return Layer{device_mma_layer_info()}; }

void check_mma16(Mma16 type, bool b_transposed) {
  const Layer l = layer();
  const int m = l.info.m, n = l.n_total(), k = kMmaCheckSteps * l.info.k16;
  std::mt19937 rng(kSeed + (type == Mma16::f16 ? 1u : 0u) + (b_transposed ? 2u : 0u));
  const auto draw = [&] { return type == Mma16::bf16 ? random_bf16(rng) : random_f16(rng); };
  const auto value = [&](uint16_t h) { return type == Mma16::bf16 ? bf16_value(h) : f16_value(h); };
  std::vector<uint16_t> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  for (uint16_t& x : a) x = draw();
  for (uint16_t& x : b) x = draw();
  std::vector<double> av(a.size()), bv(b.size());
  for (std::size_t e = 0; e < a.size(); ++e) av[e] = value(a[e]);
  for (std::size_t e = 0; e < b.size(); ++e) bv[e] = value(b[e]);
  const std::string what = std::string(type == Mma16::bf16 ? "mma_bf16" : "mma_f16") +
                           (b_transposed ? " with load_b16_trans" : " with load_b16");
  expect_product(what, device_mma16(type, b_transposed, a, b),
                 reference(av, bv, m, n, k, b_transposed), n, k);
}

void check_mma8(Mma8 type) {
  const Layer l = layer();
  const int m = l.info.m, n = l.n_total(), k = kMmaCheckSteps * l.info.k8;
  const quant::Fp8Format fmt =
      type == Mma8::e4m3fn ? quant::Fp8Format::e4m3fn : quant::Fp8Format::e4m3fnuz;
  std::mt19937 rng(kSeed + (type == Mma8::e4m3fn ? 4u : 5u));
  const auto draw = [&] {  // any code but NaN: subnormals, zeros and the max included
    for (;;) {
      const auto c = static_cast<uint8_t>(rng() & 0xFFu);
      if (!std::isnan(quant::fp8_to_f32(c, fmt))) return c;
    }
  };
  std::vector<uint8_t> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  for (uint8_t& x : a) x = draw();
  for (uint8_t& x : b) x = draw();
  std::vector<double> av(a.size()), bv(b.size());
  for (std::size_t e = 0; e < a.size(); ++e) av[e] = quant::fp8_to_f32(a[e], fmt);
  for (std::size_t e = 0; e < b.size(); ++e) bv[e] = quant::fp8_to_f32(b[e], fmt);
  expect_product(type == Mma8::e4m3fn ? "mma_e4m3" : "mma_e4m3fnuz", device_mma8(type, a, b),
                 reference(av, bv, m, n, k, false), n, k);
}

#endif  // MLACHECK_HAVE_GPU_RUNTIME

TEST(GpuMma, LayerConstantsFitTheWarp) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const MmaLayerInfo info = device_mma_layer_info();
  EXPECT_EQ(info.warp_size, kWarpSize);
  EXPECT_EQ(info.m, 16);
  EXPECT_EQ(info.n, kWarpSize == 64 ? 16 : 8);
  EXPECT_EQ(info.k16, 16);
  EXPECT_EQ(info.k8, 32);
  EXPECT_EQ(info.m * info.n % info.warp_size, 0) << "TileC's elements must spread evenly";
  if (info.has_scaled) {
    EXPECT_EQ(info.k4, 128);
  }
#endif
}

TEST(GpuMma, Bf16ProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_mma16(Mma16::bf16, false);
#endif
}

TEST(GpuMma, Bf16ProductWithTransposedBMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_mma16(Mma16::bf16, true);
#endif
}

TEST(GpuMma, F16ProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_mma16(Mma16::f16, false);
#endif
}

TEST(GpuMma, F16ProductWithTransposedBMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_mma16(Mma16::f16, true);
#endif
}

TEST(GpuMma, E4m3fnProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  if (!device_mma_layer_info().has_fp8) GTEST_SKIP() << "no e4m3fn product (kHasFp8Mma false)";
  check_mma8(Mma8::e4m3fn);
#endif
}

TEST(GpuMma, E4m3fnuzProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  if (!device_mma_layer_info().has_fp8_fnuz)
    GTEST_SKIP() << "no e4m3fnuz product (AMD gfx942 only)";
  check_mma8(Mma8::e4m3fnuz);
#endif
}

TEST(GpuMma, ScaledE2m1ProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const Layer l = layer();
  if (!l.info.has_scaled) GTEST_SKIP() << "no scaled e2m1 product (AMD gfx950 only)";
  const int m = l.info.m, n = l.n_total(), k = kMmaCheckSteps * l.info.k4, blocks = k / 32;
  std::mt19937 rng(kSeed + 6u);
  const auto rows_m = static_cast<std::size_t>(m), rows_n = static_cast<std::size_t>(n);
  std::vector<uint8_t> a(rows_m * k / 2), b(rows_n * k / 2);
  std::vector<uint8_t> sa(rows_m * blocks), sb(rows_n * blocks);
  for (uint8_t& x : a) x = static_cast<uint8_t>(rng() & 0xFFu);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng() & 0xFFu);
  for (uint8_t& x : sa) x = static_cast<uint8_t>(127u - 8u + rng() % 17u);  // 2^-8 .. 2^8
  for (uint8_t& x : sb) x = static_cast<uint8_t>(127u - 8u + rng() % 17u);
  // Element q of a row: nibble q % 2 of byte q / 2, times its block's scale.
  const auto decode = [&](const std::vector<uint8_t>& codes, const std::vector<uint8_t>& scales,
                          int rows) {
    std::vector<double> v(static_cast<std::size_t>(rows) * k);
    for (int r = 0; r < rows; ++r)
      for (int q = 0; q < k; ++q) {
        const uint8_t byte = codes[(static_cast<std::size_t>(r) * k + q) / 2];
        const auto code = static_cast<uint8_t>(q % 2 == 0 ? byte & 0xFu : byte >> 4);
        v[static_cast<std::size_t>(r) * k + q] =
            static_cast<double>(quant::e2m1_to_f32(code)) *
            quant::e8m0_to_f32(scales[static_cast<std::size_t>(r) * blocks + q / 32]);
      }
    return v;
  };
  expect_product("mma_scaled_e2m1", device_mma_scaled_e2m1(a, b, sa, sb),
                 reference(decode(a, sa, m), decode(b, sb, n), m, n, k, false), n, k);
#endif
}

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
// e4m3fn_pair_to_{bf16,f16}_pair (and the pairs of e4m3fn_quad_to_bf16_pairs) against
// quant::fp8_to_f32 for all 65536 pairs: bit for bit, NaN by NaN-ness (the halves' NaN patterns
// differ between the vendors' converts).
void check_pairs(PairTo to) {
  const std::vector<uint32_t> got = device_e4m3fn_pairs(to);
  ASSERT_EQ(got.size(), 65536u);
  const bool bf16 = to != PairTo::f16;
  const char* what = to == PairTo::bf16           ? "bf16"
                     : to == PairTo::f16          ? "f16"
                     : to == PairTo::bf16_quad_lo ? "bf16 quad, low pair"
                                                  : "bf16 quad, high pair";
  int wrong = 0;
  for (uint32_t c = 0; c < 65536u; ++c) {
    for (int half = 0; half < 2; ++half) {
      const auto code = static_cast<uint8_t>(c >> (8 * half));
      const float expected = quant::fp8_to_f32(code, quant::Fp8Format::e4m3fn);
      const uint32_t g = (got[c] >> (16 * half)) & 0xFFFFu;
      const float value = bf16 ? static_cast<float>(bf16_value(static_cast<uint16_t>(g)))
                               : static_cast<float>(f16_value(static_cast<uint16_t>(g)));
      const bool g_nan = bf16 ? (g & 0x7F80u) == 0x7F80u && (g & 0x7Fu) != 0
                              : (g & 0x7C00u) == 0x7C00u && (g & 0x3FFu) != 0;
      const bool ok = std::isnan(expected)
                          ? g_nan
                          : !g_nan && quant::f32_bits(value) == quant::f32_bits(expected);
      if (!ok && ++wrong <= 8)
        ADD_FAILURE() << std::hex << what << ": pair 0x" << c << ", code 0x" << int{code}
                      << " (sign " << (code >> 7) << ", exponent 0x" << ((code >> 3) & 0xF)
                      << ", mantissa 0x" << (code & 7) << "): got 0x" << g << std::dec << " = "
                      << value << ", expected " << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
}
#endif

TEST(GpuMma, E4m3fnPairToBf16PairIsExactForEveryPair) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_pairs(PairTo::bf16);
#endif
}

TEST(GpuMma, E4m3fnPairToF16PairIsExactForEveryPair) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_pairs(PairTo::f16);
#endif
}

// The all-fp8 recipes' P rounding in the Hopper kernel (cvt to e4m3x2 with satfinite, then to f16)
// equals the codec's on every float of its domain, 0 .. 448 (p = e^(s - m) <= 1 in the kernel), and
// on every NaN pattern: about 1.15e9 floats, each as both halves of a pair. A swapped operand order
// of the conversion would put each p in the other half (the mirrored float's rounding), and a
// rounding other than to nearest even would differ at every tie.
TEST(GpuMma, PPairToE4m3fnF16PairMatchesTheCodecOnItsDomain) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const uint32_t k448 = quant::f32_bits(448.0f);
  for (const auto& [first, last] : {std::pair{0u, k448}, std::pair{0x7F800001u, 0x7FFFFFFFu},
                                    std::pair{0xFF800001u, 0xFFFFFFFFu}}) {
    const PRoundingCheck r = device_p_pair_rounding(PRounding::e4m3fn_f16, first, last);
    EXPECT_EQ(r.wrong, 0u) << std::hex << "bits 0x" << first << " .. 0x" << last << ": first wrong p 0x"
                           << r.first_wrong_bits;
  }
#endif
}

// a4w4's P rounding in the Hopper kernel (one cvt.rn.f16x2.f32 a pair) equals f16_bits (RNE,
// subnormals kept, overflow to Inf, NaN a NaN) on every float32, each as both halves of a pair: a
// swapped operand order puts each p in the other half, a flush of f16 subnormals (P of keys far
// below the maximum) or another rounding differs from it.
TEST(GpuMma, PPairToF16PairMatchesF16BitsOnEveryFloat) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const PRoundingCheck r = device_p_pair_rounding(PRounding::f16, 0u, 0xFFFFFFFFu);
  EXPECT_EQ(r.wrong, 0u) << std::hex << "first wrong p 0x" << r.first_wrong_bits;
#endif
}

// a4w4's value tile in the Hopper kernel: each decoded bf16 pair of V as the f16 pair of its values
// rounded to f16 (the emulation's P·V operand type), against f16_bits on every bf16 value in either
// half. E2M1 values times 2^(s-127) are f16 values for scales 104..140; outside, this is the
// rounding (f16 subnormals, zeros and infinities among them).
TEST(GpuMma, Bf16PairToF16PairMatchesF16BitsOnEveryBf16) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const std::vector<uint32_t> got = device_bf16_pairs_to_f16();
  ASSERT_EQ(got.size(), 65536u);
  const auto is_nan = [](uint32_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; };
  int wrong = 0;
  for (uint32_t c = 0; c < 65536; ++c) {
    const uint32_t word = bf16_pair_word(c);
    for (int half = 0; half < 2; ++half) {
      const uint32_t bf16 = (word >> (16 * half)) & 0xFFFFu;
      const uint32_t want = common::f16_bits(quant::bf16_to_f32(static_cast<uint16_t>(bf16)));
      const uint32_t g = (got[c] >> (16 * half)) & 0xFFFFu;
      if (!(is_nan(want) ? is_nan(g) : g == want) && ++wrong <= 8)
        ADD_FAILURE() << std::hex << "bf16 0x" << bf16 << " in half " << half << ": got f16 0x" << g
                      << ", expected 0x" << want;
    }
  }
  EXPECT_EQ(wrong, 0);
#endif
}

// The four-code decode of the Hopper family's a16w8 tiles (its sm_90 path through f16 on NVIDIA),
// both of its pairs, over every pair of codes.
TEST(GpuMma, E4m3fnQuadToBf16PairsIsExactForEveryPair) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  check_pairs(PairTo::bf16_quad_lo);
  check_pairs(PairTo::bf16_quad_hi);
#endif
}

// The eight-code MXFP4 decode of the Hopper family's a16w4 tiles as the kernel takes it (table
// lookups and one bf16x2 multiply for every scale: 0 multiplies by a bf16 subnormal) against mxfp4_pair_to_bf16_pair, the
// bit-exact reference of the decode (tests/gpu/operand_decode_test.cpp checks it against the
// codecs): every code byte in every byte position, every scale, bit for bit (NaN by NaN-ness).
TEST(GpuMma, Mxfp4OctetToBf16PairsIsExactForEveryByteAndScale) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const std::vector<uint32_t> got = device_mxfp4_octets();
  ASSERT_EQ(got.size(), 4u * 65536u);
  int wrong = 0;
  for (uint32_t scale = 0; scale < 256; ++scale)
    for (uint32_t c = 0; c < 256; ++c) {
      const uint32_t word = mxfp4_octet_word(c);
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t byte = (word >> (8 * k)) & 0xFFu;
        const uint32_t want = common::mxfp4_pair_to_bf16_pair(byte, scale);
        const uint32_t g = got[4 * (256 * scale + c) + k];
        for (int half = 0; half < 2; ++half) {
          const auto gh = static_cast<uint16_t>(g >> (16 * half)), wh = static_cast<uint16_t>(want >> (16 * half));
          const auto is_nan = [](uint16_t b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0; };
          const bool ok = is_nan(wh) ? is_nan(gh) : gh == wh;
          if (!ok && ++wrong <= 8)
            ADD_FAILURE() << std::hex << "scale 0x" << scale << ", code byte 0x" << byte << " (E2M1 0x"
                          << ((byte >> (4 * half)) & 0xFu) << ", byte " << k << ", half " << half
                          << "): got bf16 0x" << gh << " (sign " << (gh >> 15) << ", exponent 0x"
                          << ((gh >> 7) & 0xFF) << ", mantissa 0x" << (gh & 0x7F) << "), expected 0x" << wh;
        }
      }
    }
  EXPECT_EQ(wrong, 0);
#endif
}

TEST(GpuMma, AsyncCopyCopiesValidChunksAndZeroFillsTheOthers) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  std::mt19937 rng(kSeed + 7u);
  std::vector<uint8_t> src(16 * kAsyncCopyChunks), valid(kAsyncCopyChunks);
  for (uint8_t& x : src) x = static_cast<uint8_t>(1u + rng() % 255u);  // never 0
  for (uint8_t& v : valid) v = static_cast<uint8_t>(rng() % 3u != 0 ? 1 : 0);
  valid[0] = 0;  // both kinds in both commit groups
  valid[1] = 1;
  valid[kAsyncCopyChunks / 2] = 0;
  valid[kAsyncCopyChunks / 2 + 1] = 1;
  const std::vector<uint8_t> got = device_async_copy_16(src, valid);
  ASSERT_EQ(got.size(), src.size());
  int wrong = 0;
  for (int c = 0; c < kAsyncCopyChunks; ++c)
    for (int i = 0; i < 16; ++i) {
      const std::size_t e = static_cast<std::size_t>(16 * c + i);
      const uint8_t expected = valid[c] != 0 ? src[e] : 0;
      if (got[e] != expected && ++wrong <= 8)
        ADD_FAILURE() << "chunk " << c << (valid[c] != 0 ? " (valid)" : " (invalid)") << ", byte "
                      << i << ": got " << int{got[e]} << ", expected " << int{expected};
    }
  EXPECT_EQ(wrong, 0);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
