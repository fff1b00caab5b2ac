// gpu/hopper/merge_choice.h (every build): where the hopper split-K merges its partials. The family's
// rule merges in the clusters for bf16 only; `cluster` (bench --merge cluster) for every recipe;
// `kernel` never; and none of them where the clusters cannot all run at once, where the caller reads
// the partials back, or where the plan has no splits (persistent). The device side of the same
// choice, both merges' bits equal for every recipe, is tests/gpu/hopper_fused_test.cpp.
#include <gtest/gtest.h>

#include "gpu/hopper/merge_choice.h"

namespace mlacheck::gpu::hopper {
namespace {

using problem::KvFormat;

// merges_in_clusters with a fixed capacity, counting how often it was asked.
int asked = 0;
bool choose(ClusterMerge m, KvFormat kv, int splits, int64_t requests, bool keep_partials, int capacity) {
  return merges_in_clusters(m, kv, splits, requests, keep_partials, [&] {
    ++asked;
    return capacity;
  });
}

TEST(GpuHopperMergeChoice, TheRuleMergesBf16InItsClustersOnly) {
  EXPECT_TRUE(choose(ClusterMerge::family_rule, KvFormat::bf16, 2, 64, false, 66));
  for (const KvFormat kv : {KvFormat::fp8, KvFormat::mxfp4})
    EXPECT_FALSE(choose(ClusterMerge::family_rule, kv, 2, 64, false, 66));
}

TEST(GpuHopperMergeChoice, ClusterAndKernelAreTakenAsAsked) {
  for (const KvFormat kv : {KvFormat::bf16, KvFormat::fp8, KvFormat::mxfp4}) {
    EXPECT_TRUE(choose(ClusterMerge::cluster, kv, 8, 4, false, 16));
    EXPECT_FALSE(choose(ClusterMerge::kernel, kv, 8, 4, false, 16));
  }
}

TEST(GpuHopperMergeChoice, NeverWhereTheClustersCannotAllRunOrThePartialsAreRead) {
  for (const ClusterMerge m : {ClusterMerge::family_rule, ClusterMerge::cluster}) {
    EXPECT_TRUE(choose(m, KvFormat::bf16, 2, 66, false, 66));    // every cluster at once
    EXPECT_FALSE(choose(m, KvFormat::bf16, 2, 67, false, 66));   // a second wave
    EXPECT_FALSE(choose(m, KvFormat::bf16, 2, 4, false, 0));     // no cluster fits
    EXPECT_FALSE(choose(m, KvFormat::bf16, 2, 4, true, 66));     // partials read back
    EXPECT_FALSE(choose(m, KvFormat::bf16, 0, 4, false, 66));    // a persistent plan
    EXPECT_FALSE(choose(m, KvFormat::bf16, 1, 4, false, 66));    // a single pass
    EXPECT_TRUE(choose(m, KvFormat::bf16, 8, 4, false, 66));     // the portable cluster size
    EXPECT_FALSE(choose(m, KvFormat::bf16, 9, 4, false, 66));    // past it
    EXPECT_FALSE(choose(m, KvFormat::bf16, 2, 0, false, 66));    // no request
  }
}

// The capacity is a runtime query: asked only where the answer depends on it.
TEST(GpuHopperMergeChoice, TheCapacityIsAskedOnlyWhereItDecides) {
  asked = 0;
  EXPECT_FALSE(choose(ClusterMerge::family_rule, KvFormat::fp8, 2, 64, false, 66));
  EXPECT_FALSE(choose(ClusterMerge::kernel, KvFormat::bf16, 2, 64, false, 66));
  EXPECT_FALSE(choose(ClusterMerge::cluster, KvFormat::bf16, 2, 64, true, 66));
  EXPECT_FALSE(choose(ClusterMerge::cluster, KvFormat::bf16, 33, 4, false, 66));
  EXPECT_EQ(asked, 0);
  EXPECT_TRUE(choose(ClusterMerge::cluster, KvFormat::fp8, 2, 64, false, 66));
  EXPECT_EQ(asked, 1);
}

// bench's refusal of a row named @merge=cluster says why in the plan's terms: a single pass has
// nothing to merge (the uniform plan's 0 splits), more than 8 splits do not fit a cluster.
TEST(GpuHopperMergeChoice, TheRefusalSaysWhyNoClusterMerges) {
  EXPECT_EQ(cluster_merge_refusal(2), std::nullopt);
  EXPECT_EQ(cluster_merge_refusal(8), std::nullopt);
  for (const int single : {0, 1})
    EXPECT_EQ(cluster_merge_refusal(single), "the plan has no split-K here (one pass a request): no partials to merge");
  EXPECT_EQ(cluster_merge_refusal(16), "16 splits a request (a cluster merges 2 to 8)");
}

}  // namespace
}  // namespace mlacheck::gpu::hopper
