// The Hopper attention kernel (issue 10): one block per (request, split) work item, all 16 heads,
// warp-specialized. A producer warp streams the split's keys in tiles of kTileKeys cache rows
// through a kStages ring with the bulk tensor copy engine (TMA, gpu/sm90/tma.h): each stage has a
// "full" mbarrier per box of 64 dims (the copy engine counts the box's bytes off it, and Q·Kᵀ
// starts on the first boxes while the others land) and an "empty" one (each consumer warp arrives
// when its products have read the tile), so the next tile's copy starts the moment a stage is
// free, and no consumer thread spends an instruction on copies. The copies ask L2 to evict the
// cache's lines first (read once). The tiles land
// in the 128-byte-swizzle layout (gpu/sm90/wgmma.h Swizzle128Tile) that both products read without
// a second copy. Two consumer warpgroups take the tiles in turn, as FlashMLA's sm90 decode kernel
// does: tile t (of the ring's count) is owned by warpgroup t % 2, which
//   1. computes Sᵀ (64 keys x 16 heads) = K Qᵀ over all 576 dims (36 K-major steps of m64n16k16);
//   2. takes the softmax step (ref/decode_emulated.h with softmax_tile = kTileKeys) from the
//      running max and sum the other warpgroup published with tile t - 1: s = fl32(dot · score
//      scale), masked keys -inf; m' = max(m, tile max); α = e^(m - m'); p = e^(s - m'); l = l·α +
//      Σp (unrounded p); P rounded to bf16 and stored as Oᵀ's B operand [key][head]; then
//      publishes P, α, Σp and m' (a named barrier both warpgroups meet at);
//   3. Oᵀ (512 dims x 16 heads) = Oᵀ·α + Vᵀ Pᵀ over its own value dims, 256 w .. 256 w + 255
//      (4 chunks of 64 dims x 4 transposed-A steps over the tile's keys).
// The other warpgroup, before its own next tile, takes the published statistics (the same float
// operations, so both keep identical m and l) and does step 3 for its dims with the published P.
// So every tile goes through the reference's sequential softmax step exactly once, one
// warpgroup's softmax runs while the other's products do, and a stage is released as soon as
// both P·V products have read it (the other warpgroup's tile before its own Q·Kᵀ).
// A thread's elements of Sᵀ and of every Oᵀ chunk lie in the same four heads (the accumulator's
// columns), so α and l stay in registers. Every operand value is a bf16 value and every product
// exact; only the float32 summation order differs from the reference (the kernel bound's delta_acc).
// A contiguous cache is copied a whole tile per box (9 boxes of 64 rows x 64 dims); a paged one a
// row per box, each row looked up in the page table. Rows of a tile past its keys are zeroed
// before P·V reads them (a row of another request, or of a NaN-poisoned unused page, times P = 0
// would still be NaN).
// Not yet: fp8 / MXFP4 caches, heads x q_len packed into N (tokens run one after another), the
// persistent schedule.
#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda.h>

#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/operands.h"
#include "gpu/common/rounding.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/kernels.h"
#include "gpu/mma/mma_nvidia.h"
#include "gpu/platform.h"
#include "gpu/sm90/tensor_map.h"
#include "gpu/sm90/tma.h"
#include "gpu/sm90/wgmma.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::hopper {
namespace {

using common::AttentionArgs;
using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
using KvTile = sm90::Swizzle128Tile<kTileKeys>;
using QTile = sm90::Swizzle128Tile<kNumHeads>;
using Acc = sm90::WgTileC64x16;
using Barrier = mma::BulkBarrier;

constexpr int kConsumerThreads = kWarpgroups * sm90::kWarpgroupThreads;
constexpr int kConsumerWarps = kConsumerThreads / kWarpSize;
constexpr int kThreads = kConsumerThreads + kWarpSize;  // the producer is the last warp
static_assert(kTileKeys == sm90::kWgM);
constexpr int kWarps = sm90::kWarpgroupWarps;                  // per warpgroup
constexpr int kQkSteps = kQkDim / sm90::kWgK16;               // 36: a tile's owner takes all dims
constexpr int kVChunks = kVDim / sm90::kWgM / kWarpgroups;     // 4 chunks of 64 value dims each
constexpr int kPvSteps = kTileKeys / sm90::kWgK16;             // 4
static_assert(kQkSteps * sm90::kWgK16 == kQkDim && kVChunks * sm90::kWgM * kWarpgroups == kVDim);
static_assert(sm90::kWgM == KvTile::kBoxDims, "a value chunk of Oᵀ is one box of the tile");
constexpr float kNegInf = -__builtin_huge_valf();

// Hardware barriers: 0 is the block's (unused: the producer never joins), 1 + w warpgroup w's,
// the consumers' (both warpgroups, not the producer), then per warpgroup w "w's tile published"
// (tile_published).
constexpr int kConsumerBarrier = 1 + kWarpgroups;
constexpr int kPublishedBarrier = kConsumerBarrier + 1;
static_assert(kPublishedBarrier + kWarpgroups <= 16, "sm_90 has 16 hardware barriers per block");

// Shared memory (bytes from a 1024-byte-aligned base: the swizzle's period):
//   stage  kStages tiles of kTileKeys cache rows in KvTile layout
//   q      Q of the current token in QTile layout (16 rows)
//   p      per warpgroup: P of its latest tile, [64 keys][16 heads] bf16 (Oᵀ's B operand, MN-major)
//   pub    per warpgroup: its latest tile's α, Σp and new running max of each head, [3][16] floats
//   red    per warpgroup: per-warp partial maxima and sums of each head, [kWarps][16] floats each
//   stats  l and m of each head at the end of a split
//   bars   per stage and box: the full barrier; then per stage: the empty one
constexpr int kPBytes = kNumHeads * kTileKeys * 2;
constexpr int kPubBytes = 3 * kNumHeads * 4;
constexpr int kRedBytes = 2 * kWarps * kNumHeads * 4;
constexpr int kOffStage = 0;
constexpr int kOffQ = kOffStage + kStages * KvTile::kBytes;
constexpr int kOffP = kOffQ + QTile::kBytes;
constexpr int kOffPub = kOffP + kWarpgroups * kPBytes;
constexpr int kOffRed = kOffPub + kWarpgroups * kPubBytes;
constexpr int kOffStats = kOffRed + kWarpgroups * kRedBytes;
constexpr int kOffBars = kOffStats + 2 * kNumHeads * 4;
constexpr int kAlignSlack = KvTile::kAtomBytes;  // dynamic shared memory is only 16-byte aligned
constexpr int kSharedBytes = kOffBars + (KvTile::kBoxes + 1) * kStages * 8 + kAlignSlack;
static_assert(kSharedBytes <= 232448, "the plan exceeds sm_90's 227 KB per block");
static_assert(KvTile::kBytes % KvTile::kAtomBytes == 0 && kOffQ % KvTile::kAtomBytes == 0 &&
              QTile::kBoxBytes % QTile::kAtomBytes == 0 && kOffP % 128 == 0 &&
              kOffBars % 8 == 0);

__device__ __forceinline__ void copy_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src));
}
__device__ __forceinline__ void copy_commit_and_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}
// Generic-proxy writes (cp.async, st.shared) made visible to wgmma's asynchronous proxy and ordered
// before the copy engine's later writes to the same bytes; a barrier after it shows every thread's.
__device__ __forceinline__ void fence_to_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Barrier of one warpgroup's 128 threads.
__device__ __forceinline__ void warpgroup_sync(int warpgroup) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + warpgroup), "n"(sm90::kWarpgroupThreads) : "memory");
}
// Barrier of the two consumer warpgroups (the producer warp runs ahead on its own).
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kConsumerBarrier), "n"(kConsumerThreads) : "memory");
}
// Warpgroup w's tile published: w's threads after their writes, the other's before reading them,
// on the barrier 4 + w of both warpgroups. Both wait: each warpgroup meets the other at every
// tile, in tile order (its own tiles as publisher, the other's as reader), so the barrier also
// orders the reader's reads before the publisher's next writes. The two sides reach it at
// different instructions, so it is the non-aligned barrier.sync: with bar.sync
// (barrier.sync.aligned, which promises one instruction for all) synccheck reported divergent
// threads. racecheck reports the statistics (pub) as read before written, in every form tried: a
// false report, which it makes on a race-free reduction of this hand-off too as soon as a
// warpgroup-local barrier (reduce_heads') lies between two hand-offs
// (gpu/sm90/racecheck_handoff_repro.cu; scripts/device-check.sh keeps this kernel out of racecheck
// while that holds; docs/PERF.md, "Device runs 1-8 of the overlap branch" and after).
__device__ __forceinline__ void tile_published(int warpgroup) {
  __syncwarp();  // each warp arrives whole
  asm volatile("barrier.sync %0, %1;\n" ::"r"(kPublishedBarrier + warpgroup), "n"(kConsumerThreads) : "memory");
}

// The largest of two scores the reference's way (a NaN second operand is skipped).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }

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

struct WorkItem {
  int64_t b = 0, row0 = 0, len = 0, q_len = 0, first = 0, end_of_split = 0;
  int split = 0, splits = 1;
  bool single_pass = true;

  __device__ explicit WorkItem(const AttentionArgs& a) {
    single_pass = a.num_splits == 0;
    splits = a.num_splits > 0 ? a.num_splits : 1;
    b = blockIdx.x / splits;
    split = static_cast<int>(blockIdx.x % splits);
    row0 = a.kv_indptr[b];
    len = a.kv_indptr[b + 1] - row0;
    q_len = a.qo_indptr[b + 1] - a.qo_indptr[b];
    const int64_t per_split = single_pass ? len : (len + splits - 1) / splits;
    first = split * per_split < len ? split * per_split : len;
    end_of_split = first + per_split < len ? first + per_split : len;
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

// The producer warp: every tile of every token of the work item, each into the next stage once its
// readers have released it. A contiguous cache: one box of kTileKeys rows per 64 dims (rows past
// the cache's end land as zeros, and every box counts its whole bytes); a paged cache: one row per
// box, the tile's n rows only.
__device__ void produce(const AttentionArgs& a, const WorkItem& w, const CUtensorMap* map,
                        unsigned char* stages, Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  if (lane == 0) sm90::tma_prefetch_map(map);
  const bool paged = a.kv_indices != nullptr;
  // The cache is read once: its lines go first from L2 (the split partials and the merge's reads
  // stay).
  const uint64_t policy = sm90::l2_evict_first_policy();
  int iter = 0;
  for (int64_t i = 0; i < w.q_len; ++i) {
    const TokenKeys k = w.token(i);
    for (int t = 0; t < k.tiles; ++t, ++iter) {
      const int s = iter % kStages;
      const auto phase = static_cast<uint32_t>((iter / kStages) & 1);
      mma::bulk_barrier_wait(&empty[s], phase ^ 1);  // a fresh barrier's "previous" phase is done
      unsigned char* dst = stages + s * KvTile::kBytes;
      Barrier* bars = full + s * KvTile::kBoxes;
      auto load = [&](void* to, int box, int32_t row) {
        sm90::tma_load_2d(to, map, box * KvTile::kBoxDims, row, &bars[box], policy);
      };
      const int64_t t0 = k.first + static_cast<int64_t>(t) * kTileKeys;
      const int n = k.keys_in(t);
      // Each box's bytes announced on its barrier before any copy is issued.
      if (lane == 0)
        for (int box = 0; box < KvTile::kBoxes; ++box)
          mma::bulk_barrier_expect(&bars[box], static_cast<uint32_t>((paged ? n : kTileKeys) * KvTile::kRowBytes));
      if (!paged) {
        if (lane == 0) {
          const auto row = static_cast<int32_t>(w.row0 + t0);
#pragma unroll
          for (int box = 0; box < KvTile::kBoxes; ++box) load(dst + box * KvTile::kBoxBytes, box, row);
        }
      } else {
        __syncwarp();
        for (int r = lane; r < n; r += kWarpSize) {
          const auto row = static_cast<int32_t>(common::kv_row(a, w.b, t0 + r));
#pragma unroll
          for (int box = 0; box < KvTile::kBoxes; ++box)
            load(dst + box * KvTile::kBoxBytes + r * KvTile::kRowBytes, box, row);
        }
      }
    }
  }
}

// Max (Sum = false) or sum over the 64 keys of each of this thread's four heads: within the thread
// (its two rows), across the 8 lanes of a column (lane bits 2..4), across the warpgroup's 4 warps
// by shared memory. Every thread gets the result for its heads. Contains a barrier of the
// warpgroup: each warpgroup reduces alone, in its own `red`.
template <bool Sum>
__device__ void reduce_heads(float (&v)[4], float* red, int warpgroup) {
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int mask = 4; mask <= 16; mask *= 2) {
      const float other = shfl_xor<kWarpSize>(v[c], mask);
      v[c] = Sum ? v[c] + other : max_of(v[c], other);
    }
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize % kWarps;
  if (lane < 4)
#pragma unroll
    for (int c = 0; c < 4; ++c) red[warp * kNumHeads + 8 * (c / 2) + 2 * lane + c % 2] = v[c];
  warpgroup_sync(warpgroup);
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int h = 8 * (c / 2) + 2 * (lane % 4) + c % 2;
    float r = red[h];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) r = Sum ? r + red[w * kNumHeads + h] : max_of(r, red[w * kNumHeads + h]);
    v[c] = r;
  }
}

// Accumulator element l of this thread is at head column Acc::get_j(l): columns 8 (l / 4) + 2 t +
// l % 2, i.e. head slot c = 2 (l / 4) + l % 2 of the thread's four heads.
__device__ __forceinline__ int head_slot(int l) { return 2 * (l / 4) + l % 2; }

// Rows n .. kTileKeys - 1 of the tile's value boxes set to zero, by its owner: the copy left
// another request's rows or stale ones there, and P·V multiplies them by P = 0.
__device__ void zero_rows_past(unsigned char* kv, int n, int wg_tid) {
  constexpr int kChunksPerRow = KvTile::kRowBytes / 16;
  constexpr int kValueBoxes = kVDim / KvTile::kBoxDims;
  const int per_box = (kTileKeys - n) * kChunksPerRow;
  for (int idx = wg_tid; idx < kValueBoxes * per_box; idx += sm90::kWarpgroupThreads) {
    const int box = idx / per_box;
    const int rest = idx % per_box;
    *reinterpret_cast<uint4*>(kv + box * KvTile::kBoxBytes + (n + rest / kChunksPerRow) * KvTile::kRowBytes +
                              (rest % kChunksPerRow) * 16) = uint4{0, 0, 0, 0};
  }
}

// One product of Oᵀ = Oᵀ·α + Vᵀ Pᵀ over this warpgroup's value dims (issued and committed, not waited):
// V from the tile at `kv`, P from `p` (a [key][head] buffer).
__device__ __forceinline__ void issue_pv(Acc (&o)[kVChunks], const float (&alpha)[4], const unsigned char* kv,
                                         const unsigned char* p, int warpgroup) {
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};
#pragma unroll
  for (int v = 0; v < kVChunks; ++v)
#pragma unroll
    for (int l = 0; l < Acc::ne; ++l) o[v].x[l] *= alpha[head_slot(l)];
  const uint64_t v_desc = sm90::smem_descriptor_sw128(kv, KvTile::kLeading, KvTile::kStride);
  const uint64_t p_desc = sm90::smem_descriptor(p, kPLayout.leading_bytes(), kPLayout.stride_bytes());
#pragma unroll
  for (int v = 0; v < kVChunks; ++v) sm90::wgmma_fence_operand(o[v]);
  sm90::wgmma_fence();
#pragma unroll
  for (int v = 0; v < kVChunks; ++v)
#pragma unroll
    for (int k = 0; k < kPvSteps; ++k) {
      const int k0 = k * sm90::kWgK16;
      sm90::wgmma_bf16_m64n16k16<true, true>(
          o[v], sm90::descriptor_advance(v_desc, KvTile::mn_major_start((warpgroup * kVChunks + v) * sm90::kWgM, k0)),
          sm90::descriptor_advance(p_desc, kPLayout.offset_bytes(k0, 0)), true);
    }
  sm90::wgmma_commit();
}

// Sᵀ = K Qᵀ of one tile over all 576 dims, each box of the tile once its copy has landed (issued
// and committed, not waited).
__device__ __forceinline__ void issue_qk(Acc& s, const unsigned char* kv, const unsigned char* sq,
                                         Barrier* bars, uint32_t parity) {
  const uint64_t k_desc = sm90::smem_descriptor_sw128(kv, KvTile::kKMajorLeading, KvTile::kStride);
  const uint64_t q_desc = sm90::smem_descriptor_sw128(sq, QTile::kKMajorLeading, QTile::kStride);
#pragma unroll
  for (int l = 0; l < Acc::ne; ++l) s.x[l] = 0.0f;
  constexpr int kStepsPerBox = KvTile::kBoxDims / sm90::kWgK16;
#pragma unroll
  for (int box = 0; box < KvTile::kBoxes; ++box) {
    mma::bulk_barrier_wait(&bars[box], parity);
    sm90::wgmma_fence_operand(s);
    sm90::wgmma_fence();
#pragma unroll
    for (int k = box * kStepsPerBox; k < (box + 1) * kStepsPerBox; ++k) {
      const int k0 = k * sm90::kWgK16;
      sm90::wgmma_bf16_m64n16k16<false>(s, sm90::descriptor_advance(k_desc, KvTile::k_major_start(k0)),
                                        sm90::descriptor_advance(q_desc, QTile::k_major_start(k0)), k > 0);
    }
  }
  sm90::wgmma_commit();
}

template <problem::KvFormat Kv, problem::PFormat P, problem::SoftmaxBase Base>
__global__ void __launch_bounds__(kThreads, 1)
    hopper_attention_kernel(AttentionArgs a, const __grid_constant__ CUtensorMap kv_map) {
  static_assert(Kv == problem::KvFormat::bf16 && P == problem::PFormat::bf16 &&
                Base == problem::SoftmaxBase::e, "first version: a16w16 only (instances.h)");
  extern __shared__ uint4 shared_words[];
  // The swizzled tiles need a 1024-byte-aligned base (kAlignSlack).
  auto* raw = reinterpret_cast<unsigned char*>(shared_words);
  const uint32_t misalign = static_cast<uint32_t>(__cvta_generic_to_shared(raw)) % KvTile::kAtomBytes;
  unsigned char* smem = raw + (misalign == 0 ? 0 : KvTile::kAtomBytes - misalign);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize;
  auto* full = reinterpret_cast<Barrier*>(smem + kOffBars);
  Barrier* empty = full + kStages * KvTile::kBoxes;
  const WorkItem w(a);

  if (tid == 0) {
    for (int s = 0; s < kStages * KvTile::kBoxes; ++s) mma::bulk_barrier_init(&full[s], 1);
    for (int s = 0; s < kStages; ++s) {
      mma::bulk_barrier_init(&empty[s], kConsumerWarps);  // one arrival per consumer warp
    }
  }
  common::block_sync();  // the only barrier of the whole block: the mbarriers are initialised
  if (tid >= kConsumerThreads) {
    produce(a, w, &kv_map, smem + kOffStage, full, empty);
    return;
  }

  const int wg = tid / sm90::kWarpgroupThreads;
  const int other = 1 - wg;
  const int wg_tid = tid % sm90::kWarpgroupThreads;
  unsigned char* sq = smem + kOffQ;
  unsigned char* own_p = smem + kOffP + wg * kPBytes;
  const unsigned char* other_p = smem + kOffP + other * kPBytes;
  float* own_pub = reinterpret_cast<float*>(smem + kOffPub + wg * kPubBytes);
  const float* other_pub = reinterpret_cast<const float*>(smem + kOffPub + other * kPubBytes);
  float* red_max = reinterpret_cast<float*>(smem + kOffRed + wg * kRedBytes);
  float* red_sum = red_max + kWarps * kNumHeads;
  float* stat_l = reinterpret_cast<float*>(smem + kOffStats);
  float* stat_m = stat_l + kNumHeads;
  static_assert(kWarpgroups == 2, "tiles alternate between two warpgroups");
  // P [key][head] (heads contiguous) as Oᵀ's B operand read MN-major: a thread's two adjacent heads
  // of a key are one 32-bit store.
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};
  const float score_scale = a.score_scale;
  const int64_t part_base = a.qo_indptr[w.b] * static_cast<int64_t>(w.splits);
  // This thread's four heads (accumulator columns), as head_slot numbers them.
  int my_head[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) my_head[c] = 8 * (c / 2) + 2 * (lane % 4) + c % 2;

  int iter = 0;  // tiles consumed so far: the ring's stage and phase, as the producer counts them
  for (int64_t i = 0; i < w.q_len; ++i) {
    const int64_t token = a.qo_indptr[w.b] + i;
    const TokenKeys keys = w.token(i);

    // Q of the token (the previous token's products are done: the barrier that ended it).
    for (int idx = tid; idx < kNumHeads * KvTile::kBoxes * 8; idx += kConsumerThreads) {
      const int h = idx / (KvTile::kBoxes * 8), chunk = idx % (KvTile::kBoxes * 8);
      copy_16(sq + QTile::chunk_offset_bytes(h, chunk), a.q_bf16 + (token * kNumHeads + h) * kQkDim + chunk * 8);
    }
    copy_commit_and_wait_all();
    fence_to_async();
    consumer_sync();

    float m_run[4], l_run[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) m_run[c] = kNegInf, l_run[c] = 0.0f;
    Acc o[kVChunks];
#pragma unroll
    for (int v = 0; v < kVChunks; ++v)
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) o[v].x[l] = 0.0f;

    // Tile t of the token is ring iteration iter + t; warpgroup (iter + t) % 2 owns it.
    const int first = iter;
    auto stage_of = [&](int t) { return (first + t) % kStages; };
    auto parity_of = [&](int t) { return static_cast<uint32_t>(((first + t) / kStages) & 1); };
    auto tile_at = [&](int t) { return smem + kOffStage + stage_of(t) * KvTile::kBytes; };
    // After a wgmma_wait<0>: Oᵀ's chunks complete, pinned there (wgmma_fence_operand).
    auto settle_outputs = [&] {
#pragma unroll
      for (int v = 0; v < kVChunks; ++v) sm90::wgmma_fence_operand(o[v]);
    };
    auto release = [&](int t) {  // this warp is done with tile t
      if (lane == 0) mma::bulk_barrier_arrive(&empty[stage_of(t)]);
      __syncwarp();  // converged for the barriers that follow
    };
    // The other warpgroup's tile t: wait for its softmax step, take its statistics (the same
    // float operations as the owner's), rescale Oᵀ and issue P·V over this warpgroup's dims.
    auto take_remote = [&](int t) {
      tile_published(other);
      // The copy engine's writes of the value boxes this warpgroup reads, acquired here too (the
      // phase is complete: the owner waited on it, and the stage is not released before this).
      Barrier* bars = full + stage_of(t) * KvTile::kBoxes;
#pragma unroll
      for (int v = 0; v < kVChunks; ++v) mma::bulk_barrier_wait(&bars[wg * kVChunks + v], parity_of(t));
      float alpha[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        alpha[c] = other_pub[my_head[c]];
        l_run[c] = l_run[c] * alpha[c] + other_pub[kNumHeads + my_head[c]];
        m_run[c] = other_pub[2 * kNumHeads + my_head[c]];
      }
      issue_pv(o, alpha, tile_at(t), other_p, wg);
    };

    for (int t = (wg - first % 2 + 2) % 2; t < keys.tiles; t += 2) {
      const int stage = stage_of(t);
      unsigned char* kv = tile_at(t);
      const int n = keys.keys_in(t);
      // The other warpgroup's previous tile first: its stage is released as soon as possible
      // (device run 1 of issue 10's overlap branch: Q·Kᵀ issued first, under the other's softmax
      // step, held both stages longer and ran at 801 µs instead of 590 at 256 x 8192).
      if (t > 0) take_remote(t - 1);
      Acc s;
      issue_qk(s, kv, sq, full + stage * KvTile::kBoxes, parity_of(t));
      sm90::wgmma_wait<0>();
      sm90::wgmma_fence_operand(s);
      settle_outputs();
      if (t > 0) release(t - 1);
      if (n < kTileKeys) zero_rows_past(kv, n, wg_tid);

      // Softmax step over the tile's keys for this thread's four heads.
      float m_tile[4] = {kNegInf, kNegInf, kNegInf, kNegInf};
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) {
        s.x[l] = Acc::get_i(l) < n ? s.x[l] * score_scale : kNegInf;
        m_tile[head_slot(l)] = max_of(m_tile[head_slot(l)], s.x[l]);
      }
      reduce_heads<false>(m_tile, red_max, wg);
      float alpha[4], m_new[4], sum[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        m_new[c] = max_of(m_run[c], m_tile[c]);
        alpha[c] = expf(m_run[c] - m_new[c]);  // 0 on the first tile
        sum[c] = 0.0f;
      }
#pragma unroll
      for (int l = 0; l < Acc::ne; l += 2) {  // elements l, l + 1: one key, adjacent heads
        const float p0 = expf(s.x[l] - m_new[head_slot(l)]);  // masked: e^-inf = 0
        const float p1 = expf(s.x[l + 1] - m_new[head_slot(l + 1)]);
        sum[head_slot(l)] += p0;
        sum[head_slot(l + 1)] += p1;
        *reinterpret_cast<uint32_t*>(own_p + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
            common::pack_bf16(quant::f32_to_bf16(common::round_to_bf16(p0)),
                              quant::f32_to_bf16(common::round_to_bf16(p1)));
      }
      reduce_heads<true>(sum, red_sum, wg);
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        l_run[c] = l_run[c] * alpha[c] + sum[c];
        m_run[c] = m_new[c];
      }
      if (wg_tid < 4)  // lanes 0..3 of the first warp hold all 16 heads between them
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          own_pub[my_head[c]] = alpha[c];
          own_pub[kNumHeads + my_head[c]] = sum[c];
          own_pub[2 * kNumHeads + my_head[c]] = m_new[c];
        }
      __syncwarp();  // the warp converged again before the barriers that follow
      fence_to_async();
      tile_published(wg);  // P, the zeroed rows and the statistics, for both warpgroups' products

      issue_pv(o, alpha, kv, own_p, wg);
      sm90::wgmma_wait<0>();
      settle_outputs();
      release(t);
    }
    if (keys.tiles > 0 && (first + keys.tiles - 1) % 2 != wg) {
      take_remote(keys.tiles - 1);
      sm90::wgmma_wait<0>();
      settle_outputs();
      release(keys.tiles - 1);
    }
    iter = first + keys.tiles;

    // The split's output: o = fl32(acc / l), lse = fl32(m + ln l); a query with no visible key in
    // the split writes o = 0, lse = -inf.
    const bool empty_split = keys.tiles == 0;
    if (tid < kWarpSize && lane / 4 == 0)  // warpgroup 0's: both hold the same statistics
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        stat_l[my_head[c]] = l_run[c];
        stat_m[my_head[c]] = m_run[c];
      }
#pragma unroll
    for (int v = 0; v < kVChunks; ++v)
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) {
        const int h = Acc::get_j(l);
        const int d = (wg * kVChunks + v) * sm90::kWgM + Acc::get_i(l);
        const float out = empty_split ? 0.0f : o[v].x[l] / l_run[head_slot(l)];
        const int64_t row = token * kNumHeads + h;
        if (w.single_pass) {
          a.out[row * kVDim + d] = quant::f32_to_bf16(out);
        } else {
          const bool bf16_partial = a.partial == problem::PartialFormat::bf16;
          a.part_o[((part_base + i * w.splits + w.split) * kNumHeads + h) * kVDim + d] =
              bf16_partial ? common::round_to_bf16(out) : out;
        }
      }
    consumer_sync();
    if (tid < kNumHeads) {
      const float lse = empty_split ? kNegInf : stat_m[tid] + common::log_base(false, stat_l[tid]);
      if (w.single_pass) {
        if (a.lse != nullptr) a.lse[token * kNumHeads + tid] = common::natural_lse(false, lse);
      } else {
        a.part_lse[(part_base + i * w.splits + w.split) * kNumHeads + tid] = lse;
      }
    }
    consumer_sync();  // stats, Q, P and the published statistics are reused by the next token
  }
}

template <std::size_t I>
void launch_instance(const AttentionArgs& args, const CUtensorMap& map, int64_t blocks,
                     hipStream_t stream) {
  constexpr common::Instance in = kInstances[I];
  constexpr auto kernel = hopper_attention_kernel<in.kv, in.p, in.base>;
  // Above 48 KB a kernel must opt in; once per instance (a runtime call, legal during capture).
  static const bool opted_in = [] {
    MLACHECK_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                           hipFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    return true;
  }();
  static_cast<void>(opted_in);
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSharedBytes, stream>>>(args, map);
}

template <std::size_t... I>
void dispatch(std::size_t instance, const AttentionArgs& args, const CUtensorMap& map, int64_t blocks,
              hipStream_t stream, std::index_sequence<I...>) {
  ((instance == I ? launch_instance<I>(args, map, blocks, stream) : void()), ...);
}

}  // namespace

void launch_attention(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                      StreamHandle stream) {
  if (blocks == 0) return;
  // The cache's tensor map (a host call, legal during graph capture; the kernel parameter holds it
  // by value): a contiguous cache is copied a tile per box, a paged one a row per box. A batch with
  // no cache rows has no key to copy, and its map is never read.
  CUtensorMap map{};
  if (args.cache_rows > 0)
    map = sm90::bf16_row_tensor_map(args.kv_bf16, args.cache_rows, kQkDim,
                                    args.kv_indices == nullptr ? kTileKeys : 1);
  dispatch(instance, args, map, blocks, static_cast<hipStream_t>(stream),
           std::make_index_sequence<kInstances.size()>());
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace mlacheck::gpu::hopper
