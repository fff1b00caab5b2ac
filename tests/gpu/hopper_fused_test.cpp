// The hopper family's split-K with the merge inside its clusters (gpu/hopper/kernels.h
// launch_attention_fused; Tunables::cluster_merge = cluster, which the family's rule takes for bf16
// only) against the same kernel with the merge kernel after it, for every recipe's split-K strategy: for every quick case (ragged, paged with page sizes 1, 16 and 64, q_len 2 and 4,
// empty requests, peaked) and 2, 3, 5 and 8 splits, the same output and LSE bits. The merge's float operations are shared
// (gpu/common/merge_math.h), so any difference is a partial read from the wrong block or token, a
// chunk merged twice or never (the poison left), or a hand-off that let a block read a partial
// before it was written. (Whether the outputs are right at all is the decode suite's question:
// its split-K hopper rows run fused wherever the split rule gives 2 to 8 splits and the clusters fit.) Skips without a
// usable GPU, on a device that is not compute capability 9.0, and in builds without sm_90a code.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/registry.h"
#include "tests/gpu/bit_differences.h"
#include "tests/gpu/decode_cases.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/device_problem.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/kernels.h"
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

// The registry's hopper split-K strategies, one per recipe.
std::vector<std::string> split_k_hopper_strategies() {
  std::vector<std::string> names;
  const std::string suffix = "/split-k/hopper";
  for (const Strategy& s : strategies())
    if (s.name.size() > suffix.size() && s.name.compare(s.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(s.name);
  return names;
}

class GpuHopperFusedMerge : public ::testing::TestWithParam<std::string> {};

TEST(GpuHopperFusedMergeList, EveryRecipeHasASplitKStrategy) {
  // The list below is the registry's: a hopper recipe without split-K would drop out silently.
  EXPECT_GE(split_k_hopper_strategies().size(), 7u);
}

TEST_P(GpuHopperFusedMerge, EqualsTheMergeKernelBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  const Strategy* base = find_strategy(GetParam());
  ASSERT_NE(base, nullptr);
  const auto instance = hopper::find_instance(base->recipe);
  ASSERT_TRUE(instance.has_value());
  int compared = 0;
  for (const int splits : {2, 3, 5, 8}) {
    // The launcher fuses when every request's cluster runs at once (gpu/hopper/launch.cpp).
    const int capacity = hopper::cluster_merge_capacity(*instance, splits);
    ASSERT_GT(capacity, 0) << "clusters of " << splits << " blocks do not fit: the fused path never runs";
    int compared_here = 0;
    Strategy s = *base;
    s.tunables.split_rule = false;
    s.tunables.splits = splits;
    s.tunables.cluster_merge = ClusterMerge::cluster;  // the family's rule keeps the decoded kernels' merge kernel
    for (const ref::CaseSpec& spec : test::decode_cases()) {
      SCOPED_TRACE(spec.name + ", " + std::to_string(splits) + " splits");
      test::PreparedCase& c = test::prepared(spec.name);
      const ref::Inputs& in = c.inputs();
      if (in.batch.num_requests() > capacity) continue;  // the launcher would not fuse it
      const problem::KvCache cache = c.cache_for(s.recipe);
      if (const auto why = s.supports(in.batch, cache)) {
        ADD_FAILURE() << base->name << " refuses a quick case: " << *why;
        continue;
      }
      DeviceProblem device(in.batch, in.q);
      // KeepWorkspace::yes keeps the partials for the caller: the merge kernel runs.
      const RunResult unfused = device.run(s, cache, KeepWorkspace::yes);
      const RunResult fused = device.run(s, cache, KeepWorkspace::no);
      test::expect_same_bits(fused.out, unfused.out, fused.lse, unfused.lse);
      ++compared_here;
    }
    EXPECT_GE(compared_here, 5) << splits << " splits: too few quick cases fit " << capacity << " clusters";
    compared += compared_here;
  }
  EXPECT_GT(compared, 0);
#endif
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuHopperFusedMerge, ::testing::ValuesIn(split_k_hopper_strategies()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& ch : name)
                             if (std::isalnum(static_cast<unsigned char>(ch)) == 0) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace mlacheck::gpu
