#pragma once
// The device side of the merge tests (tests/gpu/merge_kernel_test.cpp, and the merge kernel's half
// of tests/gpu/cluster_merge_test.cpp): the merge kernel (gpu/common/merge.hip) on given partials.
// GPU builds only (MLACHECK_HAVE_GPU_RUNTIME).
#include <cstdint>
#include <vector>

#include "gpu/common/args.h"

namespace mlacheck::gpu {

struct MergedRows {
  std::vector<uint16_t> out;  // [T, 16, 512] bf16 bits
  std::vector<float> lse;     // [T, 16] natural log
};

// The partials part_o [T, S, 16, 512] and part_lse [T, S, 16] (softmax base 2 if base2, else e)
// merged by the merge kernel with `weights` (gpu/common/merge_weights.h), S rows per token as
// split-K's uniform plan writes them. The outputs are poisoned (NaN) first. Throws
// std::invalid_argument unless 1 <= S <= kMaxSplits and the sizes fit.
MergedRows device_merge_kernel(const std::vector<float>& part_o, const std::vector<float>& part_lse, int tokens,
                               int splits, bool base2, common::MergeWeights weights);

}  // namespace mlacheck::gpu
