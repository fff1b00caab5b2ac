// gpu/sm90/cluster_merge.h on the device (NVIDIA sm_90a): the split-K merge of S partial rows
// shared by S blocks (the hopper kernel's cluster, block r taking chunks r, r + S, ...) gives the
// merge kernel's bits (gpu/common/merge.hip) on the same partials, out and LSE, with either weights
// (gpu/common/merge_weights.h: the emulation's and the vendor's, the hopper family's), in either base, with
// empty splits, a token whose every split is empty and one whose maximum LSE is +0 in some splits
// and -0 in others, for 1 to 8 splits. A block that read
// another token's rows, a chunk merged twice or never (the NaN poison left), or any other float
// order would differ.
// Skips without a usable GPU, on a device that is not compute capability 9.0, and in builds
// without sm_90a code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "problem/shape.h"
#include "tests/gpu/bit_differences.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/sm90/cluster_merge_check.h"
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuClusterMerge, EqualsTheMergeKernelBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  using problem::kNumHeads;
  using problem::kVDim;
  constexpr int kTokens = 5;
  constexpr int kAllEmptyToken = 3;
  constexpr int kZeroMaximumToken = 1;  // LSEs +0, -0 and below: both take the maximum out of split order
  std::mt19937 rng(20261202u);
  std::normal_distribution<float> value(0.0f, 1.0f);
  std::uniform_real_distribution<float> lse_value(-4.0f, 24.0f);
  for (const auto weights : {common::MergeWeights::emulated, common::MergeWeights::vendor})
  for (const int splits : {1, 2, 3, 5, 8})
    for (const bool base2 : {false, true}) {
      SCOPED_TRACE("splits " + std::to_string(splits) + (base2 ? ", base 2" : ", base e") +
                   (weights == common::MergeWeights::vendor ? ", vendor weights" : ", emulated weights"));
      const std::size_t rows = static_cast<std::size_t>(kTokens) * static_cast<std::size_t>(splits);
      std::vector<float> part_o(rows * kNumHeads * kVDim), part_lse(rows * kNumHeads);
      for (std::size_t r = 0; r < rows; ++r) {
        const int token = static_cast<int>(r) / splits;
        for (int h = 0; h < kNumHeads; ++h) {
          // An empty split (no visible key) writes o = 0 and lse = -inf, as the kernels do.
          const bool empty = token == kAllEmptyToken || (splits > 1 && rng() % 5 == 0);
          const int s = static_cast<int>(r) % splits;
          const float lse = token != kZeroMaximumToken ? lse_value(rng)
                            : s % 3 == 0                ? 0.0f
                            : s % 3 == 1                ? -0.0f
                                                        : -lse_value(rng) - 5.0f;
          part_lse[r * kNumHeads + h] = empty ? -INFINITY : lse;
          for (int d = 0; d < kVDim; ++d)
            part_o[(r * kNumHeads + h) * kVDim + d] = empty ? 0.0f : value(rng);
        }
      }
      const MergeComparison got = device_merge_both_ways(part_o, part_lse, kTokens, splits, base2, weights);
      ASSERT_EQ(got.kernel.out.size(), static_cast<std::size_t>(kTokens) * kNumHeads * kVDim);
      ASSERT_EQ(got.cluster.out.size(), got.kernel.out.size());
      int nan_in_kernel = 0;
      for (std::size_t i = 0; i < got.kernel.out.size(); ++i) nan_in_kernel += (got.kernel.out[i] & 0x7FFF) > 0x7F80 ? 1 : 0;
      const test::BitDifferences d = test::bit_differences(got.kernel.out, got.cluster.out, got.kernel.lse, got.cluster.lse);
      EXPECT_EQ(nan_in_kernel, 0) << "the merge kernel left poison";
      EXPECT_EQ(d.out, 0u) << "of " << got.kernel.out.size() << " output elements";
      EXPECT_EQ(d.lse, 0u) << "of " << got.kernel.lse.size() << " LSEs";
      for (int h = 0; h < kNumHeads; ++h)
        EXPECT_TRUE(std::isinf(got.cluster.lse[kAllEmptyToken * kNumHeads + h]) &&
                    got.cluster.lse[kAllEmptyToken * kNumHeads + h] < 0)
            << "the all-empty token's LSE, head " << h;
    }
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
