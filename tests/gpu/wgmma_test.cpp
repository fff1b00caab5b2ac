// gpu/sm90/wgmma.h on the device (NVIDIA sm_90a): D = A · Bᵀ of one warpgroup over K = 16, 64 and
// 128 against a double reference. The bound is the mma layer's (tests/gpu/mma_test.cpp): bf16
// products are exact in float32, so the only error is the summation, |d - exact| <= K 2^-22
// sum_k |a_k b_k|; a wrong descriptor (start, LBO, SBO), a wrong K step or a wrong fragment
// mapping (get_i / get_j) gives errors of the order of |exact| or leaves the NaN poison in D.
// Skips without a usable GPU, on a device that is not compute capability 9.0, and in builds
// without sm_90a code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "quant/bits.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

// Random bf16 with random sign and mantissa, exponents 2^-8 .. 2^8: every product exact in
// float32, the sums aligned.
uint16_t random_bf16(std::mt19937& rng) {
  const uint32_t sign = rng() & 1u, exp = 127u - 8u + rng() % 17u, mant = rng() & 0x7Fu;
  return static_cast<uint16_t>((sign << 15) | (exp << 7) | mant);
}

// The elements of D (rows x cols, row major) = A · Bᵀ (a: rows x k, b: cols x k bf16, K
// contiguous) farther from the exact product than the summation bound K 2^-22 sum_k |a_k b_k|;
// the first five reported.
int beyond_product_bound(const std::vector<float>& got, const std::vector<uint16_t>& a,
                         const std::vector<uint16_t>& b, int rows, int cols, int k) {
  const auto value = [](uint16_t h) { return static_cast<double>(quant::f32_from_bits(uint32_t{h} << 16)); };
  int wrong = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double exact = 0, size = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double p = value(a[static_cast<std::size_t>(i * k + kk)]) * value(b[static_cast<std::size_t>(j * k + kk)]);
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
    EXPECT_EQ(beyond_product_bound(got, a, b, 64, 64, k), 0);
  }
#endif
}

// The register-A form (wgmma_bf16_m64n16k16_rs, the Hopper family's Sᵀ = K Qᵀ of fp8 tiles
// decoded in registers): a wrong fragment mapping (WgFragA64x16) moves products between rows or
// columns, errors of the order of |exact|. Bound as above.
TEST(GpuWgmma, Bf16RegisterAProductMatchesDoubleReference) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  std::mt19937 rng(20261204u);
  for (const int k : {16, 64, 128}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    std::vector<uint16_t> a(static_cast<std::size_t>(64 * k)), b(static_cast<std::size_t>(16 * k));
    for (uint16_t& x : a) x = random_bf16(rng);
    for (uint16_t& x : b) x = random_bf16(rng);
    const std::vector<float> got = device_wgmma_bf16_rs(a, b, k);
    ASSERT_EQ(got.size(), 64u * 16u);
    EXPECT_EQ(beyond_product_bound(got, a, b, 64, 16, k), 0);
  }
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
  std::mt19937 rng(20261203u);
  const auto value = [](uint16_t h) { return static_cast<double>(quant::f32_from_bits(uint32_t{h} << 16)); };
  constexpr int kRows = 64, kHeads = 16, kDims = 576, kVDims = 512;
  std::vector<uint16_t> kv(kRows * kDims), q(kHeads * kDims), p(kHeads * kRows);
  for (uint16_t& x : kv) x = random_bf16(rng);
  for (uint16_t& x : q) x = random_bf16(rng);
  for (uint16_t& x : p) x = random_bf16(rng);
  const std::vector<float> got = device_wgmma_decode_tile(kv, q, p);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kRows * kHeads + kVDims * kHeads));
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
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
