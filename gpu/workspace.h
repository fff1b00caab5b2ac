#pragma once
// Where a portable strategy keeps its scratch inside DecodeParams::workspace: the quantized Q and
// the split-K partials. Plain C++, so the caller can size the buffer in any build.
#include <cstddef>
#include <cstdint>

#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu {

struct WorkspaceLayout {
  static constexpr std::size_t kAbsent = SIZE_MAX;
  static constexpr std::size_t kAlignment = 256;
  // Byte offsets into the workspace, kAbsent when the strategy does not use the region.
  std::size_t q_codes = kAbsent;         // uint8 fp8 codes [T, 16, 576], or E2M1 pairs [T, 16, 288]
  std::size_t q_block_scales = kAbsent;  // uint8 E8M0 [T, 16, 18] (MXFP4 Q)
  std::size_t q_scale = kAbsent;         // float [1]: the per-tensor Q scale (scaled fp8 Q)
  std::size_t amax = kAbsent;            // uint32 [kAmaxBlocks]: partial maxima (dynamic fp8 Q)
  std::size_t part_o = kAbsent;          // float [T, splits, 16, 512]: normalized split outputs
  std::size_t part_lse = kAbsent;        // float [T, splits, 16]: split LSEs (softmax base)
  // Chunked split plans (problem/split_plan.h): partial rows are per request (q_len_b x S_b rows
  // from part_start[b]) and the work list is item_start.
  std::size_t item_start = kAbsent;      // int32 [B+1]: first work item (request, split) of request b
  std::size_t part_start = kAbsent;      // int64 [B+1]: first partial row of request b
  std::size_t item_counter = kAbsent;    // int32 [1]: next work item to take (reset by the plan kernel)
  std::size_t token_rows = kAbsent;      // common::TokenRows [T]: each query row's partial rows (the merge's lookup)
  // Balanced plans (problem/split_plan.h) also: every work item resolved, and each block's first,
  // written by the plan kernel.
  std::size_t block_head = kAbsent;      // common::ResolvedItem [blocks]: block i's first item, resolved
  std::size_t item_resolved = kAbsent;   // common::ResolvedItem [B + blocks]: every item, then an end
  std::size_t bytes = 0;                 // total
};

// A plan without split-K: single pass (no partials). Partials are sized for the most splits the
// plan gives a request of at most max_kv_len keys.
WorkspaceLayout workspace_layout(const problem::Recipe& recipe, const problem::SplitPlan& plan,
                                 int64_t total_q, int64_t num_requests, int64_t max_kv_len);

}  // namespace mlacheck::gpu
