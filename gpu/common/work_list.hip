// The work list of a chunked or balanced split plan (problem/split_plan.h) from the batch layout,
// on the device so that a call needs no host synchronization: item_start = exclusive prefix sums of
// the split counts S_b, part_start = exclusive prefix sums of q_len_b · S_b, each query row's partial
// rows (token_rows, for the merge); chunked plans S_b =
// clamp(ceil(L_b / chunk), 1, 256), balanced plans S_b = balanced::pieces and also each block's
// first item. One block: each thread sums a contiguous run of requests, the block scans the
// per-thread sums, then each thread writes its run.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/common/device_common.h"
#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
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

// Request b's partial rows for s items: one per token and item (the planted fault, in every plan:
// one per item).
__device__ __forceinline__ int64_t partial_rows(const PlanArgs& a, int64_t b, int64_t s) {
  const int64_t tokens = MLACHECK_MUTANT(a, persistent_partials_unscaled_by_q_len)  // gpu/mutants.h
                             ? int64_t{1}
                             : static_cast<int64_t>(a.qo_indptr[b + 1] - a.qo_indptr[b]);
  return tokens * s;
}

// The partial rows of request b's query rows, from its first row `rows` and split count s: token i
// of the request has rows + i·s .. + s - 1 (the rows the attention kernel writes, WorkItem::part_base).
__device__ __forceinline__ void write_token_rows(const PlanArgs& a, int64_t b, int64_t rows, int32_t s) {
  for (int32_t t = a.qo_indptr[b]; t < a.qo_indptr[b + 1]; ++t) {
    TokenRows r;
    r.first = rows + static_cast<int64_t>(t - a.qo_indptr[b]) * s;
    r.splits = s;
    a.token_rows[t] = r;
  }
}

__global__ void __launch_bounds__(kPlanThreads) split_plan_kernel(PlanArgs a) {
  let_next_kernel_start();  // both: gpu/common/grid_dependency.h
  wait_for_previous_kernel();
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
    rows += partial_rows(a, b, s);
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
    const int32_t s = splits_of(a, b);
    a.item_start[b] = static_cast<int32_t>(items);
    a.part_start[b] = rows;
    write_token_rows(a, b, rows, s);
    items += s;
    rows += partial_rows(a, b, s);
  }
}

// The block's exclusive prefix sums of two per-thread values in thread order, and their totals
// (every thread gets them). Ends with a barrier, so `scratch` may be reused at once.
struct Scan2 {
  int64_t x_before = 0, y_before = 0, x_total = 0, y_total = 0;
};
__device__ Scan2 block_scan2(int64_t x, int64_t y, int64_t (&scratch)[2][kPlanThreads / kWarpSize]) {
  constexpr int kPlanWarps = kPlanThreads / kWarpSize;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int64_t x_through = group_inclusive_sum<kWarpSize>(x);
  const int64_t y_through = group_inclusive_sum<kWarpSize>(y);
  if (lane == kWarpSize - 1) {
    scratch[0][warp] = x_through;
    scratch[1][warp] = y_through;
  }
  block_sync();
  Scan2 r;
  for (int w = 0; w < kPlanWarps; ++w) {
    if (w < warp) {
      r.x_before += scratch[0][w];
      r.y_before += scratch[1][w];
    }
    r.x_total += scratch[0][w];
    r.y_total += scratch[1][w];
  }
  r.x_before += x_through - x;
  r.y_before += y_through - y;
  block_sync();
  return r;
}

// A request's fields every one of its pieces carries, loaded once for all of them.
struct RequestRows {
  int32_t row0 = 0, len = 0, q_row0 = 0, q_len = 0;
};
__device__ RequestRows request_rows(const PlanArgs& a, int64_t b) {
  RequestRows r;
  r.row0 = a.kv_indptr[b];
  r.len = a.kv_indptr[b + 1] - r.row0;
  r.q_row0 = a.qo_indptr[b];
  r.q_len = a.qo_indptr[b + 1] - r.q_row0;
  return r;
}

// Piece s of the s_count pieces of request b with these keys, resolved (common::ResolvedItem): the
// equal cut's (resolve_piece) and the one-piece cut's (one_piece_plan).
__device__ __forceinline__ ResolvedItem resolved_item(int64_t b, const RequestRows& r, int64_t s, int64_t s_count,
                                                      const problem::balanced::PieceKeys& keys, int64_t part_base,
                                                      int64_t item, int64_t block) {
  ResolvedItem f;
  f.request = static_cast<int32_t>(b);
  f.split = static_cast<int32_t>(s);
  f.splits = static_cast<int32_t>(s_count);
  f.row0 = r.row0;
  f.len = r.len;
  f.q_row0 = r.q_row0;
  f.q_len = r.q_len;
  f.first = static_cast<int32_t>(keys.first);
  f.end = static_cast<int32_t>(keys.end);
  f.part_base = part_base;
  f.item = static_cast<int32_t>(item);
  f.block = static_cast<int32_t>(block);
  return f;
}

// Piece s of the s_count pieces of request b under the equal cut, resolved; its keys as the
// emulation cuts them: balanced::piece_keys, with a_share = at / q computed once for the request.
__device__ ResolvedItem resolve_piece(const PlanArgs& a, int64_t b, const RequestRows& r, int64_t s, int64_t s_count,
                                      int64_t at, int64_t a_share, int64_t q, int64_t part_base, int64_t item,
                                      int64_t block) {
  const problem::balanced::PieceKeys keys =
      problem::balanced::piece_keys_from(at, a_share, s, s_count, q, a.unit_keys, r.len);
  return resolved_item(b, r, s, s_count, keys, part_base, item, block);
}

// Request b's pieces of at most p units under the one-piece cut, in unsigned 32 bits: a length is an
// int32, so its units plus p - 1 stay below 2^32 (a 64-bit division is a software routine).
__device__ __forceinline__ int64_t one_piece_count(const PlanArgs& a, int64_t b, int64_t p) {
  const auto len = static_cast<uint32_t>(a.kv_indptr[b + 1] - a.kv_indptr[b]);
  const auto unit = static_cast<uint32_t>(a.unit_keys);
  return problem::balanced::one_piece::pieces<uint32_t>((len + unit - 1) / unit, static_cast<uint32_t>(p));
}

// The one-piece cut's piece size P for a batch of fewer requests than blocks (split_plan.h
// balanced::one_piece), by bisection as the emulation finds it (problem/schedule.cpp), each step a
// block-wide sum of the pieces; 0 where the cut is not taken. units: the batch's U; every thread
// gets the same answer. Not inlined, nor is one_piece_plan, and only in the kernel of few requests:
// with the one-piece cut written into the equal cut's code, every persistent row that makes its plan
// in the call was 4-20 µs slower, the equal cut's batches too (the cut's code present, not run),
// while main's plan kernel with the rest of the change was not, and ncu timed the two within 3 µs
// (H100, device calls 10-17 of 2026-12-06's twenty-second session): a one-block kernel run after
// the L2 flush and the attention kernel, which likely waits on its own code's fetches.
__device__ __noinline__ int64_t one_piece_size(const PlanArgs& a, int64_t first, int64_t last, int64_t units,
                                               int64_t q, int64_t (&scratch)[2][kPlanThreads / kWarpSize]) {
  namespace one = problem::balanced::one_piece;
  const int64_t B = a.num_requests, blocks = a.balanced_blocks;
  int64_t low = one::least_size_low(units, blocks), high = one::least_size_high(units, blocks, B);
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    int64_t mine = 0;
    for (int64_t b = first; b < last; ++b) mine += one_piece_count(a, b, mid);
    if (block_scan2(mine, 0, scratch).x_total <= blocks) high = mid;
    else low = mid + 1;
  }
  return one::taken(B, blocks, low, q) ? low : 0;
}

// The work list under the one-piece cut of size p: the pieces' and partial rows' prefix sums, then
// every piece resolved (its keys one_piece::piece_keys, its block its index), each block's head
// (none past the last piece) and the end of block -1.
__device__ __noinline__ void one_piece_plan(const PlanArgs& a, int64_t first, int64_t last, int64_t p,
                                            int64_t (&scratch)[2][kPlanThreads / kWarpSize]) {
  namespace one = problem::balanced::one_piece;
  const int64_t B = a.num_requests, unit = a.unit_keys;
  int64_t pieces = 0, rows = 0;
  for (int64_t b = first; b < last; ++b) {
    const int64_t s = one_piece_count(a, b, p);
    pieces += s;
    rows += partial_rows(a, b, s);
  }
  const Scan2 sums = block_scan2(pieces, rows, scratch);
  if (threadIdx.x == 0) {
    a.item_start[B] = static_cast<int32_t>(sums.x_total);
    a.part_start[B] = sums.y_total;
  }
  int64_t item = sums.x_before, row = sums.y_before;
  for (int64_t b = first; b < last; ++b) {
    const RequestRows r = request_rows(a, b);
    const auto t = (static_cast<uint32_t>(r.len) + static_cast<uint32_t>(unit) - 1) / static_cast<uint32_t>(unit);
    const int64_t n = one_piece_count(a, b, p);
    const int64_t per = one::piece_units<uint32_t>(t, static_cast<uint32_t>(n));
    a.item_start[b] = static_cast<int32_t>(item);
    a.part_start[b] = row;
    write_token_rows(a, b, row, static_cast<int32_t>(n));
    for (int64_t s = 0; s < n; ++s, ++item) {
      const ResolvedItem f = resolved_item(b, r, s, n, one::piece_keys(per, s, n, unit, r.len), row, item, item);
      a.item_resolved[item] = f;
      a.block_head[item] = f;
    }
    row += partial_rows(a, b, n);
  }
  if (last == B && first < last) {  // the blocks past the last piece take nothing; the end after it
    for (int64_t i = item; i < a.balanced_blocks; ++i) a.block_head[i] = ResolvedItem{};
    a.item_resolved[item] = ResolvedItem{};
  }
}

// A balanced plan (problem/split_plan.h namespace balanced): the units' prefix sums give every
// A_b and the share Q (and, with fewer requests than blocks, the one-piece cut's P: where taken,
// one_piece_plan writes the work list instead); then the pieces' and partial rows' prefix sums,
// every item resolved (item_resolved, an end of block -1 after the last) and each block's first
// (block_head), written by
// the thread of the piece whose block follows a gap: every block in (previous piece's block, this
// piece's block] starts at this item, and only the last of them runs it (the others' heads empty).
// FewRequests: a batch of fewer requests than blocks, which may take the one-piece cut; a kernel of
// its own, so that the others run main's code alone (one_piece_size's comment).
template <bool FewRequests>
__global__ void __launch_bounds__(kPlanThreads) balanced_plan_kernel(PlanArgs a) {
  let_next_kernel_start();  // both: gpu/common/grid_dependency.h
  wait_for_previous_kernel();
  namespace bal = problem::balanced;
  __shared__ int64_t scratch[2][kPlanThreads / kWarpSize];
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t B = a.num_requests, unit = a.unit_keys, over = a.overhead_units;
  const int64_t per = (B + kPlanThreads - 1) / kPlanThreads;
  const int64_t first = tid * per < B ? tid * per : B;
  const int64_t last = first + per < B ? first + per : B;
  auto units = [&](int64_t b) { return bal::units_of(a.kv_indptr[b + 1] - a.kv_indptr[b], unit); };
  int64_t my_units = 0;
  for (int64_t b = first; b < last; ++b) my_units += units(b);
  const Scan2 u = block_scan2(my_units, 0, scratch);
  const int64_t q = bal::share(B * over + u.x_total, a.balanced_blocks, over);
  if (FewRequests) {  // the one-piece cut, where taken (uniform: every thread the same P)
    const int64_t p = one_piece_size(a, first, last, u.x_total, q, scratch);
    if (p > 0) {
      one_piece_plan(a, first, last, p, scratch);
      return;
    }
  }
  // A_b of this run's requests: (b + 1) · overhead + the units before b.
  int64_t pieces = 0, rows = 0;
  {
    int64_t before = u.x_before;
    for (int64_t b = first; b < last; ++b) {
      const int64_t t = units(b);
      const int64_t s = bal::pieces((b + 1) * over + before, t, q);
      pieces += s;
      rows += partial_rows(a, b, s);
      before += t;
    }
  }
  const Scan2 p = block_scan2(pieces, rows, scratch);
  if (tid == 0) {
    a.item_start[B] = static_cast<int32_t>(p.x_total);
    a.part_start[B] = p.y_total;
  }
  if (first == last) return;
  // The block of the piece before this run's first one: the last piece of request first - 1.
  int64_t prev_block = -1;
  if (first > 0) {
    const int64_t t = units(first - 1);
    const int64_t at = first * over + u.x_before - t;  // A of request first - 1
    prev_block = bal::piece_block(at, t, bal::pieces(at, t, q) - 1, q, over);
  }
  int64_t item = p.x_before, row = p.y_before, before = u.x_before;
  for (int64_t b = first; b < last; ++b) {
    const RequestRows r = request_rows(a, b);
    const int64_t t = bal::units_of(r.len, unit), at = (b + 1) * over + before;
    const int64_t a_share = at / q;  // the request's one division by Q (split_plan.h's `_from` forms)
    const int64_t s_count = bal::pieces_from(at, a_share, t, q);
    a.item_start[b] = static_cast<int32_t>(item);
    a.part_start[b] = row;
    write_token_rows(a, b, row, static_cast<int32_t>(s_count));
    for (int64_t s = 0; s < s_count; ++s, ++item) {
      const int64_t blk = bal::piece_block_from(at, a_share, t, s, q, over);
      const ResolvedItem resolved = resolve_piece(a, b, r, s, s_count, at, a_share, q, row, item, blk);
      a.item_resolved[item] = resolved;
      for (int64_t i = prev_block + 1; i <= blk; ++i) {
        a.block_head[i] = i == blk ? resolved : ResolvedItem{};
      }
      prev_block = blk;
    }
    row += partial_rows(a, b, s_count);
    before += t;
  }
  if (last == B) {  // the blocks after the last piece's take nothing; no block runs the item past the last
    for (int64_t i = prev_block + 1; i < a.balanced_blocks; ++i) a.block_head[i] = ResolvedItem{};
    a.item_resolved[item] = ResolvedItem{};
  }
}

}  // namespace

void launch_work_list(const PlanArgs& args, StreamHandle stream, KernelStart start) {
  const auto kernel = args.balanced_blocks <= 0 ? split_plan_kernel
                      : args.num_requests < args.balanced_blocks ? balanced_plan_kernel<true>
                                                                 : balanced_plan_kernel<false>;
  launch_kernel(kernel, dim3(1), dim3(kPlanThreads), 0, static_cast<hipStream_t>(stream), start, args);
}

}  // namespace mlacheck::gpu::common
