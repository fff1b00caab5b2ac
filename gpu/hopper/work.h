#pragma once
// The Hopper attention kernel's work: a block's items (one split of one request), their tokens and
// tiles, the pages of a paged cache, and the cache's tensor maps (gpu/hopper/attention.hip).
// Included by gpu/hopper/attention.hip only: its device code, in the anonymous namespace of that one
// translation unit.
#include <cstdint>

#include <cuda.h>

#include "gpu/common/args.h"
#include "gpu/common/device_common.h"
#include "gpu/common/owner.h"
#include "gpu/hopper/traits.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu::hopper {
namespace {

// The keys of one query token in one split, in tiles: the producer and the consumers walk the same
// sequence (the ring's phases depend on it).
struct TokenKeys {
  int64_t first = 0, end = 0;
  int tiles = 0;
  __device__ int keys_in(int t) const {
    const int64_t left = end - (first + static_cast<int64_t>(t) * kTileKeys);
    return static_cast<int>(left < kTileKeys ? left : kTileKeys);
  }
};

// A work item: one split of one request. A uniform plan has num_splits per request, a block each
// (item = block index); a chunked plan (the persistent schedule) has S_b = item_start[b + 1] -
// item_start[b] for request b, taken one after another by persistent blocks (ItemSource). Either
// way the split's keys are the emulation's (problem/split_plan.h): ranges of ceil(L / S) keys.
// Rows, lengths and key positions fit 32 bits (the launcher requires fewer than 2^31 cache rows),
// which keeps the fp8 consumers' registers free for Oᵀ.
struct WorkItem {
  // q_row0: the request's first query row (qo_indptr[b]), carried so that the consumers, which
  // stage Q from it, need no load of their own after the item's.
  int32_t b = 0, row0 = 0, len = 0, q_row0 = 0, q_len = 0, first = 0, end_of_split = 0;
  int64_t part_base = 0;  // the partial row of (token i, split): part_base + i·splits + split
  int split = 0, splits = 1;
  bool single_pass = true;

  WorkItem() = default;
  // A balanced plan's item as the plan kernel resolved it (common::ResolvedItem).
  __device__ WorkItem(const common::ResolvedItem& f, bool unsplit_direct)
      : b(f.request), row0(f.row0), len(f.len), q_row0(f.q_row0), q_len(f.q_len), first(f.first), end_of_split(f.end),
        part_base(f.part_base), split(f.split), splits(f.splits), single_pass(f.splits == 1 && unsplit_direct) {}
  // A uniform plan's item (a block each), or a chunked plan's (balanced plans: the resolved items).
  __device__ WorkItem(const AttentionArgs& a, int64_t item, bool chunked) {
    if (chunked) {
      single_pass = false;
      b = common::owner_of(a.item_start, a.num_requests, item);
      splits = a.item_start[b + 1] - a.item_start[b];
      split = static_cast<int>(item - a.item_start[b]);
      part_base = a.part_start[b];
    } else {
      single_pass = a.num_splits == 0;
      splits = a.num_splits > 0 ? a.num_splits : 1;
      b = static_cast<int32_t>(item / splits);
      split = static_cast<int>(item % splits);
      part_base = a.qo_indptr[b] * static_cast<int64_t>(splits);
    }
    row0 = a.kv_indptr[b];
    len = a.kv_indptr[b + 1] - row0;
    q_row0 = a.qo_indptr[b];
    q_len = a.qo_indptr[b + 1] - q_row0;
    const int64_t per_split = single_pass ? len : (int64_t{len} + splits - 1) / splits;
    first = static_cast<int32_t>(split * per_split < len ? split * per_split : len);
    end_of_split = static_cast<int32_t>(first + per_split < len ? first + per_split : len);
  }
  // Token i of the request sees keys 0 .. len - q_len + i (causal rule, problem/batch.h).
  __device__ TokenKeys token(int64_t i) const {
    const int64_t visible_raw = len - q_len + i + 1;
    const int64_t visible = visible_raw > 0 ? visible_raw : 0;
    TokenKeys k;
    k.first = first;
    k.end = end_of_split < visible ? end_of_split : visible;
    const int64_t keys = k.end > first ? k.end - first : 0;
    k.tiles = static_cast<int>((keys + kTileKeys - 1) / kTileKeys);
    return k;
  }
};

// A slot of the work-item queue: the item (valid) or the end of the block's items.
struct QueuedItem {
  WorkItem w;
  int32_t valid = 0;
};
static_assert(sizeof(QueuedItem) <= kItemSlotBytes && alignof(QueuedItem) <= 8, "a queue slot holds a work item");

// The block's work items, in order. A uniform plan: the block's own item, then none. A balanced
// plan (the persistent schedule, one block per SM): the block's own run of items, of equal cost by
// construction, each resolved by the plan kernel (its first in block_head, the next ones in
// item_resolved from the first's index on, up to the first of another block). A chunked plan (the
// same schedule with `--chunks`): the producer warp takes each next item from item_counter
// (dynamic, so items of unequal length balance across the SMs; work_list.hip resets the counter
// for each call). Either way the producer hands each item to the consumers through the queue's
// slot j % kItemSlots: its full barrier (the producer's one arrival) and its empty one (an arrival per
// consumer warp, once the warp has read the slot). The producer thus takes item j + 1, and
// streams its tiles, while the consumers still finish item j. The item past the last (>= count)
// is handed on too: it ends both loops.
// One pointer only (the queue's full barriers; then its empty ones, then the slots): the fp8
// consumers hold it beside Oᵀ of 512 dims, at the register limit. Chunked is a compile-time switch
// for the same reason: the split-K instances keep their registers (ptxas spilled 178 bytes of the
// fp8 consumers with the switch at run time, 8 without).
template <bool Chunked>
struct ItemSource {
  Barrier* full = nullptr;

  __device__ Barrier* empty() const { return full + kItemSlots; }
  __device__ QueuedItem* slots() const { return reinterpret_cast<QueuedItem*>(full + 2 * kItemSlots); }
  __device__ static int64_t count(const AttentionArgs& a) {
    return Chunked ? a.item_start[a.num_requests] : gridDim.x;
  }
  // The j-th item into w, by the producer warp (all its lanes) or by a consumer warp (all its
  // lanes); false past the last. Chunked: the producer loads the item's fields (a balanced plan's
  // resolved item, or WorkItem's chain of dependent loads) and hands them over in the slot, so that
  // the consumers, which reach an item at the end of the previous one, read shared memory instead of
  // waiting for global loads.
  template <bool Producer>
  __device__ bool take(const AttentionArgs& a, int j, WorkItem& w) const {
    if constexpr (!Chunked) {
      if (j != 0) return false;
      w = WorkItem(a, static_cast<int64_t>(blockIdx.x), false);
      return true;
    }
    const int slot = j % kItemSlots;
    const auto phase = static_cast<uint32_t>((j / kItemSlots) & 1);
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    if constexpr (Producer) {
      mma::bulk_barrier_wait(&empty()[slot], phase ^ 1);  // a fresh barrier's "previous" phase is done
      bool valid = false;
      if (a.block_head != nullptr) {  // balanced: the block's items, resolved (one load each)
        const common::ResolvedItem head = a.block_head[blockIdx.x];
        valid = head.splits > 0;
        if (valid && j > 0) {
          const common::ResolvedItem next = a.item_resolved[head.item + j];  // the end's block is -1
          valid = next.block == static_cast<int32_t>(blockIdx.x);
          if (valid) w = WorkItem(next, a.unsplit_direct);
        } else if (valid) {
          w = WorkItem(head, a.unsplit_direct);
        }
      } else {
        int32_t item = 0;
        if (lane == 0) item = atomicAdd(a.item_counter, 1);
        item = __shfl_sync(0xFFFFFFFFu, item, 0);
        valid = item < count(a);
        if (valid) w = WorkItem(a, item, true);
      }
      if (lane == 0) {
        QueuedItem& q = slots()[slot];
        if (valid) q.w = w;
        q.valid = valid ? 1 : 0;
        mma::bulk_barrier_arrive(&full[slot]);  // release: the slot's writes before the arrival
      }
      return valid;
    } else {
      mma::bulk_barrier_wait(&full[slot], phase);
      const QueuedItem& q = slots()[slot];
      const bool valid = q.valid != 0;
      if (valid) w = q.w;
      __syncwarp();  // every lane's read before the warp's release
      if (lane == 0) mma::bulk_barrier_arrive(&empty()[slot]);
      __syncwarp();
      return valid;
    }
  }
};

// The query tokens of the block's work items, in order: (item, token) pairs. The producer and the
// consumers walk the same sequence (the ring's phases depend on it).
// Pack: the tokens of an item are taken up to Pack at a time (a group): the group's tiles are the
// union of its tokens' keys (its last token's: every token's keys start at the split's first), each
// tile copied once for all of them.
template <bool Producer, bool Chunked, int Pack = 1>
struct TokenCursor {
  ItemSource<Chunked> source;
  int taken = 0;
  WorkItem w;
  int i = 0;  // the group's first token of w
  bool more = false;

  __device__ TokenCursor(const AttentionArgs& a, const ItemSource<Chunked>& s) : source(s) { next_item(a); }
  __device__ void advance(const AttentionArgs& a) {
    i += Pack;
    if (i < w.q_len) return;
    next_item(a);
  }
  // The group's tokens: i .. i + group() - 1.
  __device__ int group() const { return Pack == 1 ? 1 : w.q_len - i < Pack ? w.q_len - i : Pack; }
  // The union of the group's keys.
  __device__ TokenKeys keys() const { return w.token(i + group() - 1); }

 private:
  __device__ void next_item(const AttentionArgs& a) {
    for (;;) {
      if (!source.template take<Producer>(a, taken++, w)) {
        more = false;
        return;
      }
      i = 0;
      if (w.q_len > 0) {
        more = true;
        return;
      }
    }
  }
};

// Run j of the key positions first .. first + count - 1 that lie in one page of a paged cache: run 0
// from `first`, run j > 0 from the j-th page boundary after it, each up to the next boundary; an
// empty run (from == to) past the last. The rows of a run are consecutive cache rows. Key
// positions are below 2^31 (kv_indptr is int32): the divisions are 32-bit ones.
struct PageRun {
  int64_t from = 0, to = 0;
};
__device__ __forceinline__ PageRun page_run(int64_t page, int64_t first, int64_t count, int j) {
  const int64_t end = first + count;
  const auto pages_before = [page](int64_t key) {
    return int64_t{static_cast<uint32_t>(key) / static_cast<uint32_t>(page)};
  };
  PageRun r;
  r.from = j == 0 ? first : (pages_before(first) + j) * page;
  if (r.from >= end) return PageRun{end, end};
  const int64_t boundary = (pages_before(r.from) + 1) * page;
  r.to = boundary < end ? boundary : end;
  return r;
}

// The bulk tensor copies' maps of a bf16 cache, one per box height 2^k rows, k = 0 .. 6 (a box
// height is fixed in its map): a contiguous cache reads whole tiles (k = 6), a paged one cuts each
// run of keys in one page into power-of-two boxes. Rows land where their tile row says, in the
// swizzled layout (the swizzle follows the shared address, so a box may start at any row).
// Measured (docs/PERF.md, device run 1 of 2026-12-02 session 5): with a box per row, paged
// (64) 32 x 4096 ran at 298 µs against 52 for the contiguous cache: 576 copies per tile.
inline constexpr int kRunMaps = 7;
static_assert(1 << (kRunMaps - 1) == kTileKeys, "the largest box is a whole tile");
struct KvMaps {
  CUtensorMap rows[kRunMaps];
  CUtensorMap scales;  // MXFP4: the block scales' map (produce_mxfp4)
};

}  // namespace
}  // namespace mlacheck::gpu::hopper
