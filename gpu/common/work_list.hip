// The work list of a chunked split plan (problem/split_plan.h) from the batch layout, on the
// device so that a call needs no host synchronization: S_b = clamp(ceil(L_b / chunk), 1, 256),
// item_start = exclusive prefix sums of S_b, part_start = exclusive prefix sums of q_len_b · S_b.
// One block: each thread sums a contiguous run of requests, the block scans the per-thread sums,
// then each thread writes its run.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/common/device_common.h"
#include "gpu/common/kernels.h"
#include "gpu/warp.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu::common {
namespace {

constexpr int kPlanThreads = 256;

__device__ __forceinline__ int32_t splits_of(const PlanArgs& a, int64_t b) {
  const problem::SplitPlan plan = problem::SplitPlan::chunked(a.chunk_keys);
  return plan.splits_of(a.kv_indptr[b + 1] - a.kv_indptr[b]);
}

__global__ void __launch_bounds__(kPlanThreads) split_plan_kernel(PlanArgs a) {
  constexpr int kPlanWarps = kPlanThreads / kWarpSize;
  __shared__ int64_t warp_items[kPlanWarps];
  __shared__ int64_t warp_rows[kPlanWarps];
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int64_t per = (a.num_requests + kPlanThreads - 1) / kPlanThreads;
  const int64_t first = tid * per < a.num_requests ? tid * per : a.num_requests;
  const int64_t last = first + per < a.num_requests ? first + per : a.num_requests;
  int64_t items = 0, rows = 0;
  for (int64_t b = first; b < last; ++b) {
    const int32_t s = splits_of(a, b);
    items += s;
    rows += (MLACHECK_MUTANT(a, persistent_partials_unscaled_by_q_len)  // gpu/mutants.h
                 ? int64_t{1}
                 : static_cast<int64_t>(a.qo_indptr[b + 1] - a.qo_indptr[b])) * s;
  }
  // Exclusive scan of the per-thread sums in thread order: within each warp by shuffles, then the
  // warps' totals (a scan by one thread over all 256 sums cost a chain of shared-memory loads).
  const int64_t items_through = group_inclusive_sum<kWarpSize>(items);
  const int64_t rows_through = group_inclusive_sum<kWarpSize>(rows);
  if (lane == kWarpSize - 1) {
    warp_items[warp] = items_through;
    warp_rows[warp] = rows_through;
  }
  block_sync();
  int64_t items_before = 0, rows_before = 0;
  for (int w = 0; w < warp; ++w) {
    items_before += warp_items[w];
    rows_before += warp_rows[w];
  }
  if (tid == kPlanThreads - 1) {
    a.item_start[a.num_requests] = static_cast<int32_t>(items_before + items_through);
    a.part_start[a.num_requests] = rows_before + rows_through;
    *a.item_counter = 0;  // each call starts the work list afresh (graph replays included)
  }
  items = items_before + items_through - items;
  rows = rows_before + rows_through - rows;
  for (int64_t b = first; b < last; ++b) {
    a.item_start[b] = static_cast<int32_t>(items);
    a.part_start[b] = rows;
    const int32_t s = splits_of(a, b);
    items += s;
    rows += (MLACHECK_MUTANT(a, persistent_partials_unscaled_by_q_len)  // gpu/mutants.h
                 ? int64_t{1}
                 : static_cast<int64_t>(a.qo_indptr[b + 1] - a.qo_indptr[b])) * s;
  }
}

}  // namespace

void launch_work_list(const PlanArgs& args, StreamHandle stream) {
  split_plan_kernel<<<1, kPlanThreads, 0, static_cast<hipStream_t>(stream)>>>(args);
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace mlacheck::gpu::common
