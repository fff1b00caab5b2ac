// gpu/sm90/wgmma.h on the device (NVIDIA sm_90a): D = A · Bᵀ of one warpgroup over K = 16, 64 and
// 128 against a double reference, with bf16 operands and (the register-A form and the decode
// tile's two products) f16 operands, and the e4m3 product against ref/fp8_mma.h's model of its
// accumulation, bit for bit. For the 16-bit operands the bound is the mma layer's (tests/gpu/mma_test.cpp): bf16
// products (8 + 8 significant bits) and f16 products (11 + 11) are exact in float32, so the only
// error is the summation, |d - exact| <= K 2^-22 sum_k |a_k b_k|; a wrong descriptor (start, LBO,
// SBO), a wrong K step or a wrong fragment mapping (get_i / get_j) gives errors of the order of
// |exact| or leaves the NaN poison in D.
// Skips without a usable GPU, on a device that is not compute capability 9.0, and in builds
// without sm_90a code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "quant/bits.h"
#include "quant/fp8.h"
#include "ref/fp8_mma.h"
#include "tests/gpu/half_values.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

#if defined(MLACHECK_HAVE_SM90A)

// Random bf16 with random sign and mantissa, exponents 2^-8 .. 2^8: every product exact in
// float32, the sums aligned.
uint16_t random_bf16(std::mt19937& rng) {
  const uint32_t sign = rng() & 1u, exp = 127u - 8u + rng() % 17u, mant = rng() & 0x7Fu;
  return static_cast<uint16_t>((sign << 15) | (exp << 7) | mant);
}
using test::bf16_value;
using test::f16_value;

// The f16 bits of the value of e4m3fn code `code` (finite, nonzero): (1 + m/8) 2^(e-7) for exponent
// field e >= 1, m 2^-9 for e = 0, every one a normal f16 (2^-9 .. 448, at most 4 significant bits).
uint16_t e4m3fn_as_f16(uint8_t code) {
  const uint32_t sign = code >> 7, e = (code >> 3) & 0xFu;
  uint32_t m = code & 0x7u;
  if (e != 0) return static_cast<uint16_t>((sign << 15) | ((e - 7u + 15u) << 10) | (m << 7));
  uint32_t shift = 0;  // m 2^-9 = (m 2^shift / 8) 2^(-6 - shift), m 2^shift in 8 .. 15
  for (; m < 8u; m <<= 1) ++shift;
  return static_cast<uint16_t>((sign << 15) | ((15u - 6u - shift) << 10) | ((m - 8u) << 7));
}

// Random normal f16, never zero, random sign: half of them the value of a random finite nonzero
// e4m3fn code (what the all-fp8 recipes' K and V decode to: gpu/hopper/attention.hip), half a
// random 10-bit mantissa with exponents 2^-8 .. 2^8. |a b| lies in 2^-18 .. 2^18 and a sum of 576
// of them below 2^28: no product or sum near float32's (or an f16 input near f16's) range ends, and
// every product is exact in float32.
uint16_t random_f16(std::mt19937& rng) {
  if (rng() & 1u) {
    uint32_t code = 0;
    do code = rng() & 0xFFu;
    while ((code & 0x7Fu) == 0 || (code & 0x7Fu) == 0x7Fu);  // ±0 and the NaNs
    return e4m3fn_as_f16(static_cast<uint8_t>(code));
  }
  const uint32_t sign = rng() & 1u, exp = 15u - 8u + rng() % 17u, mant = rng() & 0x3FFu;
  return static_cast<uint16_t>((sign << 15) | (exp << 10) | mant);
}

uint16_t random_operand(Wgmma16 type, std::mt19937& rng) {
  return type == Wgmma16::bf16 ? random_bf16(rng) : random_f16(rng);
}
double operand_value(Wgmma16 type, uint16_t h) {
  return type == Wgmma16::bf16 ? bf16_value(h) : f16_value(h);
}
const char* operand_name(Wgmma16 type) { return type == Wgmma16::bf16 ? "bf16" : "f16"; }

// The elements of D (rows x cols, row major) = A · Bᵀ (value_a(i, kk), value_b(j, kk): the operands'
// values, K contiguous) farther from the exact product than the summation bound
// K 2^-22 sum_k |a_k b_k|; the first five reported.
template <class ValueA, class ValueB>
int beyond_bound(const std::vector<float>& got, ValueA value_a, ValueB value_b, int rows, int cols, int k) {
  int wrong = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double exact = 0, size = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double p = value_a(i, kk) * value_b(j, kk);
        exact += p;
        size += std::fabs(p);
      }
      const float d = got[static_cast<std::size_t>(i * cols + j)];
      const double bound = std::ldexp(1.0, -22) * k * size;
      if (!(std::fabs(d - exact) <= bound) && ++wrong <= 5)
        ADD_FAILURE() << "D[" << i << "][" << j << "] = " << d << ", exact " << exact
                      << (std::isnan(d) ? " (NaN poison: never written, or a read of poisoned shared memory)" : "")
                      << ", bound " << bound;
    }
  return wrong;
}
// beyond_bound for 16-bit patterns of `type` (a: rows x k, b: cols x k).
int beyond_product_bound(Wgmma16 type, const std::vector<float>& got, const std::vector<uint16_t>& a,
                         const std::vector<uint16_t>& b, int rows, int cols, int k) {
  return beyond_bound(
      got, [&](int i, int kk) { return operand_value(type, a[static_cast<std::size_t>(i * k + kk)]); },
      [&](int j, int kk) { return operand_value(type, b[static_cast<std::size_t>(j * k + kk)]); }, rows, cols, k);
}

// The register-A product (device_wgmma_rs) with operands of `type` over K = 16, 64 and 128.
void check_register_a(Wgmma16 type, unsigned seed) {
  std::mt19937 rng(seed);
  for (const int k : {16, 64, 128}) {
    SCOPED_TRACE(std::string(operand_name(type)) + ", K = " + std::to_string(k) + ", seed " +
                 std::to_string(seed));
    std::vector<uint16_t> a(static_cast<std::size_t>(64 * k)), b(static_cast<std::size_t>(16 * k));
    for (uint16_t& x : a) x = random_operand(type, rng);
    for (uint16_t& x : b) x = random_operand(type, rng);
    const std::vector<float> got = device_wgmma_rs(type, a, b, k);
    ASSERT_EQ(got.size(), 64u * 16u);
    EXPECT_EQ(beyond_product_bound(type, got, a, b, 64, 16, k), 0);
  }
}

// Both products of one decode tile (device_wgmma_decode_tile) with operands of `type`.
void check_decode_tile(Wgmma16 type, unsigned seed) {
  SCOPED_TRACE(std::string(operand_name(type)) + ", seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  constexpr int kRows = 64, kHeads = 16, kDims = 576, kVDims = 512;
  std::vector<uint16_t> kv(kRows * kDims), q(kHeads * kDims), p(kHeads * kRows);
  for (uint16_t& x : kv) x = random_operand(type, rng);
  for (uint16_t& x : q) x = random_operand(type, rng);
  for (uint16_t& x : p) x = random_operand(type, rng);
  const std::vector<float> got = device_wgmma_decode_tile(type, kv, q, p);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kRows * kHeads + kVDims * kHeads));
  const auto value = [type](uint16_t h) { return operand_value(type, h); };
  int wrong = 0;
  const auto expect = [&](const char* what, int i, int j, float d, double exact, double size, int k) {
    const double bound = std::ldexp(1.0, -22) * k * size;
    if (!(std::fabs(d - exact) <= bound) && ++wrong <= 6)
      ADD_FAILURE() << what << "[" << i << "][" << j << "] = " << d << ", exact " << exact
                    << ", bound " << bound;
  };
  for (int r = 0; r < kRows; ++r)
    for (int h = 0; h < kHeads; ++h) {
      double exact = 0, size = 0;
      for (int d = 0; d < kDims; ++d) {
        const double x = value(kv[r * kDims + d]) * value(q[h * kDims + d]);
        exact += x;
        size += std::fabs(x);
      }
      expect("S^T", r, h, got[static_cast<std::size_t>(r * kHeads + h)], exact, size, kDims);
    }
  for (int d = 0; d < kVDims; ++d)
    for (int h = 0; h < kHeads; ++h) {
      double exact = 0, size = 0;
      for (int r = 0; r < kRows; ++r) {
        const double x = value(kv[r * kDims + d]) * value(p[h * kRows + r]);
        exact += x;
        size += std::fabs(x);
      }
      expect("O^T", d, h, got[static_cast<std::size_t>(kRows * kHeads + d * kHeads + h)], exact, size, kRows);
    }
  EXPECT_EQ(wrong, 0);
}

double e4m3_value(uint8_t code) { return quant::fp8_to_f32(code, quant::Fp8Format::e4m3fn); }

// The e4m3fn code of 2^e, e in -9 .. 8 (e < -6: a subnormal, the code's mantissa 2^(e + 9)).
uint8_t e4m3_power_of_two(int e) {
  if (e >= -6) return static_cast<uint8_t>((e + 7) << 3);
  return static_cast<uint8_t>(1 << (e + 9));
}

// The elements of D (64 x 16) that differ from ref/fp8_mma.h's model (kSm90Fp8Mma: K steps of 32,
// each taking the last one's D as C) of C + A·Bᵀ (A 64 x k, B 16 x k e4m3fn codes, K contiguous)
// in any bit; the first five reported.
int unlike_the_model(const std::vector<float>& got, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                     const std::vector<float>& c, int k) {
  int wrong = 0;
  std::vector<float> row(static_cast<std::size_t>(k)), col(row.size());
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 16; ++j) {
      for (int kk = 0; kk < k; ++kk) {
        row[static_cast<std::size_t>(kk)] = static_cast<float>(e4m3_value(a[static_cast<std::size_t>(i * k + kk)]));
        col[static_cast<std::size_t>(kk)] = static_cast<float>(e4m3_value(b[static_cast<std::size_t>(j * k + kk)]));
      }
      const std::size_t at = static_cast<std::size_t>(i * 16 + j);
      const float want = ref::fp8_mma_accumulate(c[at], row.data(), col.data(), k, ref::kSm90Fp8Mma);
      if (quant::f32_bits(got[at]) != quant::f32_bits(want) && ++wrong <= 5)
        ADD_FAILURE() << "D[" << i << "][" << j << "] = " << got[at] << ", the model " << want
                      << (std::isnan(got[at]) ? " (NaN poison: never written, or a read of poisoned shared memory)" : "");
    }
  return wrong;
}

// Random e4m3fn products (C = 0) over K = 32, 64 and 128: any code but NaN (zeros, subnormals and
// ±448 included), so |a b| spans 2^-18 .. 448^2 and the sums cancel. Every element must equal the
// model of the accumulation bit for bit (docs/probes/fp8_accumulation.cu measured it so on 524 288
// sums); a wrong descriptor (LBO, SBO or start: KMajorLayout8), K step or fragment mapping moves
// products between rows, columns or K steps, and a missed byte reads the NaN poison.
// register_a: the register-A form (device_wgmma_e4m3_rs), else both operands in shared memory.
void check_e4m3_products(unsigned seed, bool register_a) {
  std::mt19937 rng(seed);
  const auto draw = [&] {
    for (;;) {
      const auto c = static_cast<uint8_t>(rng() & 0xFFu);
      if ((c & 0x7Fu) != 0x7Fu) return c;
    }
  };
  for (const int k : {32, 64, 128}) {
    SCOPED_TRACE("K = " + std::to_string(k) + ", seed " + std::to_string(seed));
    std::vector<uint8_t> a(static_cast<std::size_t>(64 * k)), b(static_cast<std::size_t>(16 * k));
    for (uint8_t& x : a) x = draw();
    for (uint8_t& x : b) x = draw();
    const std::vector<float> zero(64 * 16, 0.0f);
    const std::vector<float> got = register_a ? device_wgmma_e4m3_rs(a, b, k) : device_wgmma_e4m3(a, b, zero, k);
    ASSERT_EQ(got.size(), 64u * 16u);
    EXPECT_EQ(unlike_the_model(got, a, b, zero, k), 0);
  }
}

#endif  // MLACHECK_HAVE_SM90A

TEST(GpuWgmma, Bf16ProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  std::mt19937 rng(20261202u);
  for (const int k : {16, 64, 128}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    std::vector<uint16_t> a(static_cast<std::size_t>(64 * k)), b(a.size());
    for (uint16_t& x : a) x = random_bf16(rng);
    for (uint16_t& x : b) x = random_bf16(rng);
    const std::vector<float> got = device_wgmma_bf16(a, b, k);
    ASSERT_EQ(got.size(), 64u * 64u);
    EXPECT_EQ(beyond_product_bound(Wgmma16::bf16, got, a, b, 64, 64, k), 0);
  }
#endif
}

// The register-A form (wgmma_m64n16k16_rs, the Hopper family's Sᵀ = K Qᵀ of fp8 tiles
// decoded in registers): a wrong fragment mapping (WgFragA64x16) moves products between rows or
// columns, errors of the order of |exact|. Bound as above.
TEST(GpuWgmma, Bf16RegisterAProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  check_register_a(Wgmma16::bf16, 20261204u);
#endif
}

// The f16 register-A form (wgmma_m64n16k16_rs<WgOperand::f16>: the all-fp8 recipes' Sᵀ = K Qᵀ,
// K decoded from e4m3 codes to f16 pairs). Bound as above. What an operand-type slip gives:
// f16 bits read as bf16 (the .bf16 instruction) turn exponent field E (6 .. 23 here) and mantissa
// m into about 2^(8 E + floor(m / 128) - 127), 2^-79 .. 2^65 instead of 2^-9 .. 2^9: each sum is
// dominated by its largest misread product, many orders of magnitude beyond K 2^-22 sum|a b| (at
// most 2^-15 of it); bf16 operands fed to the f16 instruction would be read as values in 0.5 .. 4
// whatever their exponent, errors of the order of |exact| again.
TEST(GpuWgmma, F16RegisterAProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  check_register_a(Wgmma16::f16, 20261205u);
#endif
}

// The two products of a decode tile as the Hopper family runs them on one shared tile of cache
// rows (gpu/sm90/wgmma.h DecodeTileLayout): Sᵀ = K Qᵀ reads it K-major, Oᵀ = Vᵀ Pᵀ reads the same
// bytes MN-major (transposed A). Bound as above, with K = 576 and 64.
TEST(GpuWgmma, DecodeTileProductsMatchDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  check_decode_tile(Wgmma16::bf16, 20261203u);
#endif
}

// The same two products with f16 operands (wgmma_m64n16k16<false, false, WgOperand::f16> and
// <true, false, WgOperand::f16>: the all-fp8 recipes' operand type; both the K-major and the
// transposed-A MN-major read of f16 bytes). An operand-type slip in either product fails as in
// F16RegisterAProductMatchesDoubleReference: every element of Sᵀ or of Oᵀ far beyond its bound.
TEST(GpuWgmma, F16DecodeTileProductsMatchDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  check_decode_tile(Wgmma16::f16, 20261206u);
#endif
}

// How many bits the e4m3 product's accumulation keeps (device_wgmma_e4m3 with a loaded C, one K step
// of 32; b's columns all 1 at k = 0 and 2^8 at k = 1, 2). Rows 0 .. 23: C = 2^r plus the product
// 1 x 1, so D = 2^r + 1. Rows 24 .. 41: C = 0 and two products of the one step, 2^8 x 2^8 and
// 2^(8 - g) x 2^8 (g = r - 24: 0 .. 17), D = 2^16 + 2^(16 - g). Rows 42 .. 63: C = -2^(r - 42) plus
// 1 x 1, D = 1 - 2^(r - 42). Every D is exact in float32, so a float32 accumulation gives each
// exactly; the tensor core keeps 13 bits below the step's largest term (ref/fp8_mma.h), so each
// group loses its small addend from r (or g) = 14 on, and every D must be the model's bit for bit.
// The first inexact row of each group is recorded (14, 14, 14 on the H100 of 2026-12-05).
TEST(GpuWgmma, E4m3AccumulationKeepsTheModelsBits) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  constexpr int k = 32;  // one K step of the e4m3 product
  std::vector<uint8_t> a(64 * k, 0), b(16 * k, 0);
  std::vector<float> c(64 * 16, 0.0f);
  std::vector<double> exact(64);
  const auto at = [](int row, int kk) { return static_cast<std::size_t>(row * k + kk); };
  for (int j = 0; j < 16; ++j) {
    b[at(j, 0)] = e4m3_power_of_two(0);
    b[at(j, 1)] = b[at(j, 2)] = e4m3_power_of_two(8);
  }
  for (int r = 0; r < 64; ++r) {
    double start = 0;
    if (r < 24) {
      start = std::ldexp(1.0, r);
      a[at(r, 0)] = e4m3_power_of_two(0);
      exact[static_cast<std::size_t>(r)] = start + 1.0;
    } else if (r < 42) {
      const int g = r - 24;
      a[at(r, 1)] = e4m3_power_of_two(8);
      a[at(r, 2)] = e4m3_power_of_two(8 - g);
      exact[static_cast<std::size_t>(r)] = std::ldexp(1.0, 16) + std::ldexp(1.0, 16 - g);
    } else {
      start = -std::ldexp(1.0, r - 42);
      a[at(r, 0)] = e4m3_power_of_two(0);
      exact[static_cast<std::size_t>(r)] = start + 1.0;
    }
    for (int j = 0; j < 16; ++j) c[static_cast<std::size_t>(r * 16 + j)] = static_cast<float>(start);
  }
  const std::vector<float> got = device_wgmma_e4m3(a, b, c, k);
  ASSERT_EQ(got.size(), 64u * 16u);
  EXPECT_EQ(unlike_the_model(got, a, b, c, k), 0);
  // Per group, the first row whose D differs from the exact value in any column (-1: none).
  constexpr int kGroups[][2] = {{0, 24}, {24, 42}, {42, 64}};
  for (int grp = 0; grp < 3; ++grp) {
    int first = -1;
    for (int r = kGroups[grp][0]; r < kGroups[grp][1] && first < 0; ++r)
      for (int j = 0; j < 16; ++j)
        if (static_cast<double>(got[static_cast<std::size_t>(r * 16 + j)]) != exact[static_cast<std::size_t>(r)]) {
          first = r - kGroups[grp][0];
          break;
        }
    ::testing::Test::RecordProperty("group_" + std::to_string(grp) + "_first_inexact", std::to_string(first));
    EXPECT_EQ(first, ref::kSm90Fp8Mma.bits + 1) << "group " << grp;
  }
#endif
}

// The e4m3 product (wgmma_m64n16k32_e4m3, KMajorLayout8) against the model, bit for bit.
TEST(GpuWgmma, E4m3ProductMatchesTheModel) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  check_e4m3_products(20261207u, false);
#endif
}

// The e4m3 register-A form (wgmma_m64n16k32_e4m3_rs, WgFragA64x32e4m3): a wrong fragment mapping
// moves codes between rows, K steps or bytes of a register: elements unlike the model.
TEST(GpuWgmma, E4m3RegisterAProductMatchesTheModel) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  check_e4m3_products(20261208u, true);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
