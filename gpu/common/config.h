#pragma once
// Compile-time constants of the kernels every family shares (Q quantization, the LSE merge, the
// split limit), each with why. Plain C++: the host side (workspace layout, registry) reads them too.
#include "problem/split_plan.h"

namespace mlacheck::gpu::common {

// Split-K limit: the split plans' (problem/split_plan.h); bounds the merge's weight array.
inline constexpr int kMaxSplits = problem::kMaxPlanSplits;

// Q quantization: the per-tensor amax is reduced in two steps without atomics (deterministic,
// nothing to clear before a launch): kAmaxBlocks partial maxima in the workspace, then every block
// of the encode kernel reduces those itself.
inline constexpr int kQuantThreads = 256;
inline constexpr int kAmaxBlocks = 256;

// Threads of the LSE-merge kernel: one block per (query row, head), 4 of the 512 dims each.
inline constexpr int kMergeThreads = 128;

}  // namespace mlacheck::gpu::common
