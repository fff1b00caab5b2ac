// The merge kernel (gpu/common/merge.hip) on the device against the same float operations on the
// host (gpu/common/merge_math.h, splits in order: the emulation's step 5), bit for bit, out and LSE,
// in either base, for 1 to 256 splits: the counts where the kernel's lane-per-split weights wrap
// around the warp (31, 32, 33, 100, 256) included. Tokens: random LSEs; a maximum that is +0 in
// some splits and -0 in others (the kernel takes the maximum in another order than the fold, which
// may give the other zero); every split empty but the last; every split empty. A split added twice
// or left out, another order of W or of the products, or a wrong weight changes bits.
// Skips without a usable GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/common/merge_math.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "tests/gpu/bit_differences.h"

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

// merge_math.h's operations in split order, as the emulation orders them. Unused in a build
// without a GPU runtime (the test skips there).
[[maybe_unused]] HostMerged host_merge(const std::vector<float>& part_o, const std::vector<float>& part_lse, int tokens, int splits,
                      bool base2) {
  namespace merge = common::merge;
  HostMerged m;
  m.out.resize(static_cast<std::size_t>(tokens) * kNumHeads * kVDim);
  m.lse.resize(static_cast<std::size_t>(tokens) * kNumHeads);
  for (int t = 0; t < tokens; ++t)
    for (int h = 0; h < kNumHeads; ++h) {
      const auto row = [&](int s) { return (static_cast<std::size_t>(t) * splits + s) * kNumHeads + h; };
      float big = merge::kNegInf;
      for (int s = 0; s < splits; ++s) big = merge::max_lse(big, part_lse[row(s)]);
      std::vector<float> w(static_cast<std::size_t>(splits));
      float total = 0.0f;
      for (int s = 0; s < splits; ++s) {
        w[s] = merge::weight(base2, part_lse[row(s)], big);
        total = total + w[s];
      }
      m.lse[static_cast<std::size_t>(t) * kNumHeads + h] = merge::merged_lse(base2, big, total);
      for (int d = 0; d < kVDim; ++d) {
        float acc = 0.0f;
        if (!merge::empty_row(big)) {
          for (int s = 0; s < splits; ++s) acc = merge::accumulate(acc, w[s], part_o[row(s) * kVDim + d]);
          acc = acc / total;
        }
        m.out[(static_cast<std::size_t>(t) * kNumHeads + h) * kVDim + d] = quant::f32_to_bf16(acc);
      }
    }
  return m;
}

TEST(GpuMergeKernel, EqualsTheHostMergeBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  constexpr int kTokens = 4;
  enum Token { kRandom, kZeroMaximum, kOnlyLast, kAllEmpty };
  std::mt19937 rng(20261204u);
  std::normal_distribution<float> value(0.0f, 1.0f);
  std::uniform_real_distribution<float> lse_value(-4.0f, 24.0f);
  for (const int splits : {1, 2, 7, 31, 32, 33, 100, 256})
    for (const bool base2 : {false, true}) {
      SCOPED_TRACE("splits " + std::to_string(splits) + (base2 ? ", base 2" : ", base e"));
      const std::size_t rows = static_cast<std::size_t>(kTokens) * static_cast<std::size_t>(splits);
      std::vector<float> part_o(rows * kNumHeads * kVDim), part_lse(rows * kNumHeads);
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
          part_lse[r * kNumHeads + h] = empty ? -INFINITY : lse;
          for (int d = 0; d < kVDim; ++d) part_o[(r * kNumHeads + h) * kVDim + d] = empty ? 0.0f : value(rng);
        }
      }
      const MergedRows got = device_merge_kernel(part_o, part_lse, kTokens, splits, base2);
      const HostMerged want = host_merge(part_o, part_lse, kTokens, splits, base2);
      ASSERT_EQ(got.out.size(), want.out.size());
      ASSERT_EQ(got.lse.size(), want.lse.size());
      const test::BitDifferences d = test::bit_differences(want.out, got.out, want.lse, got.lse);
      EXPECT_EQ(d.out, 0u) << "of " << got.out.size() << " output elements";
      EXPECT_EQ(d.lse, 0u) << "of " << got.lse.size() << " LSEs";
    }
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
