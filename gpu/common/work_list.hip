// The work list of a chunked split plan (problem/split_plan.h) from the batch layout, on the
// device so that a call needs no host synchronization: S_b = clamp(ceil(L_b / chunk), 1, 256),
// item_start = exclusive prefix sums of S_b, part_start = exclusive prefix sums of q_len_b · S_b.
// One block: each thread sums a contiguous run of requests, thread 0 scans the per-thread sums
// (at most kPlanThreads of them), then each thread writes its run.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/common/device_common.h"
#include "gpu/common/kernels.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu::common {
namespace {

constexpr int kPlanThreads = 256;

__device__ __forceinline__ int32_t splits_of(const PlanArgs& a, int64_t b) {
  const problem::SplitPlan plan = problem::SplitPlan::chunked(a.chunk_keys);
  return plan.splits_of(a.kv_indptr[b + 1] - a.kv_indptr[b]);
}

__global__ void __launch_bounds__(kPlanThreads) split_plan_kernel(PlanArgs a) {
  __shared__ int64_t items_of[kPlanThreads];
  __shared__ int64_t rows_of[kPlanThreads];
  const int tid = static_cast<int>(threadIdx.x);
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
  items_of[tid] = items;
  rows_of[tid] = rows;
  block_sync();
  if (tid == 0) {  // exclusive scan of the per-thread sums, in order
    int64_t item_sum = 0, row_sum = 0;
    for (int t = 0; t < kPlanThreads; ++t) {
      const int64_t i = items_of[t], r = rows_of[t];
      items_of[t] = item_sum;
      rows_of[t] = row_sum;
      item_sum += i;
      row_sum += r;
    }
    a.item_start[a.num_requests] = static_cast<int32_t>(item_sum);
    a.part_start[a.num_requests] = row_sum;
    *a.item_counter = 0;  // each call starts the work list afresh (graph replays included)
  }
  block_sync();
  items = items_of[tid];
  rows = rows_of[tid];
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
