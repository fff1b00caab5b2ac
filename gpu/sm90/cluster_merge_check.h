#pragma once
// NVIDIA builds for sm_90a only (MLACHECK_HAVE_SM90A): the device side of
// tests/gpu/cluster_merge_test.cpp (gpu/sm90/cluster_merge.h).
#include <vector>

#include "gpu/common/merge_check.h"

namespace mlacheck::gpu {

// The partials part_o [T, S, 16, 512] and part_lse [T, S, 16] merged on the device twice: by the
// merge kernel (gpu/common/merge.hip) and by cluster_merge_rows with S blocks per token, each
// taking its rank's share of the chunks, both with `weights` (gpu/common/merge_weights.h). Outputs
// are poisoned (NaN) before each.
// 1 <= S <= sm90::kMaxClusterSplits.
struct MergeComparison {
  MergedRows kernel, cluster;
};
MergeComparison device_merge_both_ways(const std::vector<float>& part_o,
                                       const std::vector<float>& part_lse, int tokens, int splits,
                                       bool base2, common::MergeWeights weights);

}  // namespace mlacheck::gpu
