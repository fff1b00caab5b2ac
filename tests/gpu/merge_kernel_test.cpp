// The merge kernel (gpu/common/merge.hip) on the device against the same float operations on the
// host (gpu/common/merge_math.h, splits in order: the emulation's step 5), for 1 to 256 splits: the
// counts where the kernel's lane-per-split weights wrap around the warp (31, 32, 33, 100, 256)
// included. Tokens: random LSEs; a maximum that is +0 in some splits and -0 in others (the kernel
// takes the maximum in another order than the fold, which may give the other zero); every split
// empty but the last; every split empty.
// - The emulation's weights (MergeWeights::emulated): bit for bit, out and LSE, in either base. A
//   split added twice or left out, another order of W or of the products, or a wrong weight changes
//   bits.
// - The vendor's float32 weights (MergeWeights::vendor, the hopper family's): within the bound
//   derived at vendor_bound_misses below, which the host tests here hold to both sides: it accepts
//   float32 weights from another library (glibc's) and rejects known-wrong merges (a split left out,
//   the other softmax base, a base-2 LSE reported unconverted, equal weights).
// The device tests skip without a usable GPU; the bound's host tests run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/common/merge_math.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "tests/gpu/bit_differences.h"

#include "gpu/common/args.h"
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/common/merge_check.h"
#endif

namespace mlacheck::gpu {
namespace {

using problem::kNumHeads;
using problem::kVDim;

struct HostMerged {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

struct Partials {
  int tokens = 0, splits = 0;
  std::vector<float> o, lse;  // [T, S, 16, 512], [T, S, 16]
  std::size_t row(int t, int s, int h) const {
    return (static_cast<std::size_t>(t) * static_cast<std::size_t>(splits) + static_cast<std::size_t>(s)) * kNumHeads +
           static_cast<std::size_t>(h);
  }
};

// The test's tokens (the header's list), one of each kind, values N(0, 1), LSEs in [lse_low,
// lse_high] (the device tests' [-4, 24] leaves many splits a negligible weight; the known-wrong
// merges take a narrow range, where every split weighs enough to matter).
enum Token { kRandom, kZeroMaximum, kOnlyLast, kAllEmpty, kTokens };
Partials make_partials(int splits, std::mt19937& rng, float lse_low = -4.0f, float lse_high = 24.0f) {
  std::normal_distribution<float> value(0.0f, 1.0f);
  std::uniform_real_distribution<float> lse_value(lse_low, lse_high);
  Partials p;
  p.tokens = kTokens;
  p.splits = splits;
  const std::size_t rows = static_cast<std::size_t>(kTokens) * static_cast<std::size_t>(splits);
  p.o.resize(rows * kNumHeads * kVDim);
  p.lse.resize(rows * kNumHeads);
  for (std::size_t r = 0; r < rows; ++r) {
    const int token = static_cast<int>(r) / splits, s = static_cast<int>(r) % splits;
    for (int h = 0; h < kNumHeads; ++h) {
      float lse = lse_value(rng);
      bool empty = splits > 1 && rng() % 5 == 0;  // no visible key: o = 0, lse = -inf, as the kernels write
      if (token == kZeroMaximum) {
        empty = false;
        lse = s % 3 == 0 ? 0.0f : s % 3 == 1 ? -0.0f : -lse_value(rng) - 5.0f;
      } else if (token == kOnlyLast) {
        empty = s != splits - 1;
      } else if (token == kAllEmpty) {
        empty = true;
      }
      p.lse[r * kNumHeads + h] = empty ? -INFINITY : lse;
      for (int d = 0; d < kVDim; ++d) p.o[(r * kNumHeads + h) * kVDim + d] = empty ? 0.0f : value(rng);
    }
  }
  return p;
}

// How a host merge takes its weights and merged LSE (the rest is merge_math.h's, in split order).
struct HostWeights {
  std::function<float(bool base2, float lse, float big)> weight;
  std::function<float(bool base2, float big, float total)> merged_lse;
};
// The emulation's (merge_math.h: fl32 of double-precision functions).
HostWeights emulated_weights() {
  return {common::merge::weight, common::merge::merged_lse};
}
// Another library's float32 functions (glibc's expf / exp2f / logf / log2f, < 1 ulp, as documented
// in its manual's "Known Maximum Errors in Math Functions"): a correct merge that is not the
// device's vendor functions, for the bound's no-false-alarm test.
HostWeights glibc_float_weights() {
  return {[](bool base2, float lse, float big) {
            return common::merge::empty_row(big) ? 0.0f : base2 ? std::exp2(lse - big) : std::exp(lse - big);
          },
          [](bool base2, float big, float total) {
            if (common::merge::empty_row(big)) return common::merge::kNegInf;
            return base2 ? (big + std::log2(total)) * static_cast<float>(common::math_detail::kLn2)
                         : big + std::log(total);
          }};
}

// merge_math.h's operations in split order, as the emulation orders them, with `weights`' weights;
// `skip`: a split left out (a known-wrong merge), or -1.
HostMerged host_merge(const Partials& p, bool base2, const HostWeights& weights, int skip = -1) {
  namespace merge = common::merge;
  HostMerged m;
  m.out.resize(static_cast<std::size_t>(p.tokens) * kNumHeads * kVDim);
  m.lse.resize(static_cast<std::size_t>(p.tokens) * kNumHeads);
  for (int t = 0; t < p.tokens; ++t)
    for (int h = 0; h < kNumHeads; ++h) {
      float big = merge::kNegInf;
      for (int s = 0; s < p.splits; ++s)
        if (s != skip) big = merge::max_lse(big, p.lse[p.row(t, s, h)]);
      std::vector<float> w(static_cast<std::size_t>(p.splits), 0.0f);
      float total = 0.0f;
      for (int s = 0; s < p.splits; ++s) {
        if (s == skip) continue;
        w[s] = weights.weight(base2, p.lse[p.row(t, s, h)], big);
        total = total + w[s];
      }
      m.lse[static_cast<std::size_t>(t) * kNumHeads + h] = weights.merged_lse(base2, big, total);
      for (int d = 0; d < kVDim; ++d) {
        float acc = 0.0f;
        if (!merge::empty_row(big)) {
          for (int s = 0; s < p.splits; ++s)
            if (s != skip) acc = merge::accumulate(acc, w[s], p.o[p.row(t, s, h) * kVDim + d]);
          acc = acc / total;
        }
        m.out[(static_cast<std::size_t>(t) * kNumHeads + h) * kVDim + d] = quant::f32_to_bf16(acc);
      }
    }
  return m;
}

// Where a merge whose weights and merged LSE come from float32 functions of at most kFuncUlps ulp
// (CUDA exp2f / expf 2 ulp, log2f / logf 1: CUDA C Programming Guide, "Mathematical Functions")
// may leave the emulation's, element by element (u = 2^-24):
// - each w_s is off by <= 2 kFuncUlps u relative (the double-precision one by far less), so W = Σ w_s
//   and N = Σ w_s o_s, each summed in split order by both, differ by <= (2 kFuncUlps + 2 S) u of
//   W and of Σ w_s |o_s| (the two sums' S roundings each, at different values); out = N / W then
//   differs by <= e_S (Σ w_s |o_s| / W + |out|) plus the two quotients' roundings (u |out| each),
//   e_S = (2 kFuncUlps + 2 S + 2) u;
// - rounded to bf16 each moves by <= half a step of its own binade: the step of the larger of the
//   two in magnitude bounds both halves;
// - the LSE: log_b W off by <= kFuncUlps ulp of it (|log_b W| <= log2 S) plus e_S of W, M + log_b W
//   rounded once more by either, and a base-2 LSE's product with fl32(ln 2) once more: <= (kFuncUlps
//   + 4 + 2 S) 2^-23 (|lse| + log2 S + 1).
// Returns how many output elements and finite LSEs fall outside, and the rows whose LSE is finite
// in one and not the other (-inf must stay -inf).
struct BoundMisses {
  std::size_t out = 0, lse = 0, lse_class = 0;
};
constexpr double kFuncUlps = 2;
BoundMisses vendor_bound_misses(const HostMerged& got, const HostMerged& want, const Partials& p, bool base2) {
  BoundMisses m;
  const double u = std::ldexp(1.0, -24);
  const double e_s = (2 * kFuncUlps + 2 * p.splits + 2) * u;
  for (int t = 0; t < p.tokens; ++t)
    for (int h = 0; h < kNumHeads; ++h) {
      const std::size_t lse_at = static_cast<std::size_t>(t) * kNumHeads + static_cast<std::size_t>(h);
      const float lg = got.lse[lse_at], lw = want.lse[lse_at];
      if (std::isfinite(lg) != std::isfinite(lw) || (!std::isfinite(lw) && !(lg == lw))) {
        ++m.lse_class;
      } else if (std::isfinite(lw)) {
        const double allowed = (kFuncUlps + 4 + 2.0 * p.splits) * std::ldexp(1.0, -23) *
                               (std::fabs(lw) + std::log2(static_cast<double>(p.splits)) + 1);
        m.lse += std::fabs(static_cast<double>(lg) - lw) > allowed;
      }
      // Σ w_s |o_s| / W in double, from the emulation's weights (the bound's own scale).
      double big = -INFINITY;
      for (int s = 0; s < p.splits; ++s)
        if (p.lse[p.row(t, s, h)] > big) big = p.lse[p.row(t, s, h)];
      std::vector<double> w(static_cast<std::size_t>(p.splits), 0.0);
      double total = 0;
      for (int s = 0; s < p.splits; ++s) {
        const double x = static_cast<double>(p.lse[p.row(t, s, h)]) - big;
        w[s] = std::isfinite(big) ? (base2 ? std::exp2(x) : std::exp(x)) : 0.0;
        total += w[s];
      }
      for (int d = 0; d < kVDim; ++d) {
        const std::size_t at = lse_at * kVDim + static_cast<std::size_t>(d);
        const double g = quant::bf16_to_f32(got.out[at]), e = quant::bf16_to_f32(want.out[at]);
        double spread = 0;
        for (int s = 0; s < p.splits; ++s) spread += w[s] * std::fabs(p.o[p.row(t, s, h) * kVDim + d]);
        spread = total > 0 ? spread / total : 0;
        const double larger = std::max(std::fabs(g), std::fabs(e));
        const double half_step = larger > 0 ? std::ldexp(1.0, std::ilogb(larger) - 8) : 0;  // bf16: 7 stored bits
        const double allowed = 2 * half_step + e_s * (spread + std::fabs(e)) + 2 * u * std::fabs(e);
        m.out += !(std::fabs(g - e) <= allowed);  // a NaN is a miss
      }
    }
  return m;
}

constexpr int kSplitCounts[] = {1, 2, 7, 31, 32, 33, 100, 256};

TEST(GpuMergeKernel, EmulatedWeightsEqualTheHostMergeBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  std::mt19937 rng(20261204u);
  for (const int splits : kSplitCounts)
    for (const bool base2 : {false, true}) {
      SCOPED_TRACE("splits " + std::to_string(splits) + (base2 ? ", base 2" : ", base e"));
      const Partials p = make_partials(splits, rng);
      const MergedRows got = device_merge_kernel(p.o, p.lse, p.tokens, splits, base2, common::MergeWeights::emulated);
      const HostMerged want = host_merge(p, base2, emulated_weights());
      ASSERT_EQ(got.out.size(), want.out.size());
      ASSERT_EQ(got.lse.size(), want.lse.size());
      const test::BitDifferences d = test::bit_differences(want.out, got.out, want.lse, got.lse);
      EXPECT_EQ(d.out, 0u) << "of " << got.out.size() << " output elements";
      EXPECT_EQ(d.lse, 0u) << "of " << got.lse.size() << " LSEs";
    }
#endif
}

TEST(GpuMergeKernel, VendorWeightsStayWithinTheirBoundOfTheHostMerge) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  std::mt19937 rng(20261207u);
  std::size_t differing = 0;
  for (const int splits : kSplitCounts)
    for (const bool base2 : {false, true}) {
      SCOPED_TRACE("splits " + std::to_string(splits) + (base2 ? ", base 2" : ", base e"));
      const Partials p = make_partials(splits, rng);
      const MergedRows device = device_merge_kernel(p.o, p.lse, p.tokens, splits, base2, common::MergeWeights::vendor);
      const HostMerged got{device.out, device.lse};
      const HostMerged want = host_merge(p, base2, emulated_weights());
      ASSERT_EQ(got.out.size(), want.out.size());
      ASSERT_EQ(got.lse.size(), want.lse.size());
      const BoundMisses m = vendor_bound_misses(got, want, p, base2);
      EXPECT_EQ(m.out, 0u) << "output elements outside the bound";
      EXPECT_EQ(m.lse, 0u) << "LSEs outside the bound";
      EXPECT_EQ(m.lse_class, 0u) << "LSEs finite in one and not the other";
      // The empty token's rows are exactly 0 and -inf, as the emulation's.
      for (int h = 0; h < kNumHeads; ++h) {
        EXPECT_EQ(got.lse[kAllEmpty * kNumHeads + h], -INFINITY);
        for (int d = 0; d < kVDim; ++d) EXPECT_EQ(got.out[(kAllEmpty * kNumHeads + h) * kVDim + d], 0u);
      }
      differing += test::bit_differences(want.out, got.out, want.lse, got.lse).out;
    }
  // Informational: how far from the emulation's bits the vendor's functions moved the outputs.
  std::cout << "vendor weights: " << differing << " output elements differ from the emulation's bits\n";
#endif
}

// The bound accepts an independent correct merge: float32 weights from glibc, not the emulation's
// double-precision ones (their outputs do differ in some elements, so the test is not vacuous).
TEST(MergeVendorBound, AcceptsFloat32WeightsOfAnotherLibrary) {
  std::mt19937 rng(20261208u);
  std::size_t differing = 0;
  for (const int splits : kSplitCounts)
    for (const bool base2 : {false, true}) {
      SCOPED_TRACE("splits " + std::to_string(splits) + (base2 ? ", base 2" : ", base e"));
      const Partials p = make_partials(splits, rng);
      const HostMerged want = host_merge(p, base2, emulated_weights());
      const HostMerged other = host_merge(p, base2, glibc_float_weights());
      const BoundMisses m = vendor_bound_misses(other, want, p, base2);
      EXPECT_EQ(m.out, 0u);
      EXPECT_EQ(m.lse, 0u);
      EXPECT_EQ(m.lse_class, 0u);
      const test::BitDifferences d = test::bit_differences(want.out, other.out, want.lse, other.lse);
      differing += d.out + d.lse;
    }
  EXPECT_GT(differing, 0u) << "glibc's float32 weights gave the emulation's bits everywhere: nothing was tested";
}

// The bound rejects known-wrong merges, each in over an eighth of the elements: of the four tokens
// the all-empty one is 0 and -inf whatever the weights, the only-last one has one split that counts,
// and at 2 splits the zero-maximum one's two splits weigh 1 in either base or equally, so the random
// token's quarter is all that the other base and equal weights can move there.
TEST(MergeVendorBound, RejectsKnownWrongMerges) {
  std::mt19937 rng(20261209u);
  for (const int splits : {2, 7, 33})
    for (const bool base2 : {false, true}) {
      SCOPED_TRACE("splits " + std::to_string(splits) + (base2 ? ", base 2" : ", base e"));
      const Partials p = make_partials(splits, rng, 0.0f, 2.0f);
      const HostMerged want = host_merge(p, base2, emulated_weights());
      const std::size_t elements = want.out.size();
      // A split left out (the first: every token but the all-empty one has it, but kOnlyLast).
      const BoundMisses dropped = vendor_bound_misses(host_merge(p, base2, emulated_weights(), 0), want, p, base2);
      EXPECT_GT(dropped.out, elements / 8) << "a split left out";
      // The other softmax base for the weights and the LSE.
      const BoundMisses other_base = vendor_bound_misses(host_merge(p, !base2, emulated_weights()), want, p, base2);
      EXPECT_GT(other_base.out, elements / 8) << "the other base";
      EXPECT_GT(other_base.lse, want.lse.size() / 8) << "the other base";
      // Equal weights (every non-empty split weighs 1: gpu/mutants.h equal_weight_merge).
      HostWeights equal = emulated_weights();
      equal.weight = [](bool, float lse, float big) {
        return common::merge::empty_row(big) || lse == common::merge::kNegInf ? 0.0f : 1.0f;
      };
      EXPECT_GT(vendor_bound_misses(host_merge(p, base2, equal), want, p, base2).out, elements / 8) << "equal weights";
      // A base-2 LSE reported without its conversion to the natural log (gpu/mutants.h lse_in_base2).
      HostMerged unconverted = want;
      for (float& l : unconverted.lse) l *= static_cast<float>(common::math_detail::kLog2e);
      EXPECT_GT(vendor_bound_misses(unconverted, want, p, base2).lse, want.lse.size() / 8) << "the LSE in base 2";
    }
}

}  // namespace
}  // namespace mlacheck::gpu
