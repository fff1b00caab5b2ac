// The Hopper attention kernel (issue 10): one block per (request, split) work item, all 16 heads,
// warp-specialized. A producer warp streams the split's keys in tiles of kTileKeys cache rows
// through a kStages ring with the bulk tensor copy engine (TMA, gpu/sm90/tma.h): each stage has a
// "full" mbarrier (the copy engine counts the tile's bytes off it) and an "empty" one (each
// consumer warp arrives when its products have read the tile), so the next tile's copy starts the
// moment a stage is free, and no consumer thread spends an instruction on copies. Two consumer
// warpgroups share each tile, landed in the 128-byte-swizzle layout (gpu/sm90/wgmma.h
// Swizzle128Tile) that both products read without a second copy:
//   1. Sᵀ (64 keys x 16 heads) = K Qᵀ: warpgroup w sums dims 288 w .. 288 w + 287 (18 K-major steps
//      of m64n16k16); the halves meet in shared memory (double-buffered by tile parity) and both
//      warpgroups form S = S₀ + S₁ (the same bits in both: float addition commutes);
//   2. softmax step (ref/decode_emulated.h with softmax_tile = kTileKeys), computed by both
//      warpgroups on the same values: s = fl32(dot · score scale), masked keys -inf; m' = max(m,
//      tile max); p = e^(s - m'); l = l·α + Σp (unrounded p); P rounded to bf16 and stored, by
//      each warpgroup for itself, as Oᵀ's B operand [key][head];
//   3. Oᵀ (512 dims x 16 heads) = Oᵀ·α + Vᵀ Pᵀ: warpgroup w owns value dims 256 w .. 256 w + 255,
//      4 chunks of 64 dims x 4 transposed-A steps over the tile's keys.
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
constexpr int kQkSteps = kQkDim / sm90::kWgK16 / kWarpgroups;  // 18 per warpgroup
constexpr int kVChunks = kVDim / sm90::kWgM / kWarpgroups;     // 4 chunks of 64 value dims each
constexpr int kPvSteps = kTileKeys / sm90::kWgK16;             // 4
static_assert(kQkSteps * sm90::kWgK16 * kWarpgroups == kQkDim &&
              kVChunks * sm90::kWgM * kWarpgroups == kVDim);
static_assert(sm90::kWgM == KvTile::kBoxDims, "a value chunk of Oᵀ is one box of the tile");
constexpr int kRowBytes = kQkDim * 2;  // a bf16 cache row
constexpr float kNegInf = -__builtin_huge_valf();

// Hardware barriers: 0 is the block's (unused: the producer never joins), 1 + w warpgroup w's,
// and the consumers' (both warpgroups, not the producer).
constexpr int kConsumerBarrier = 1 + kWarpgroups;

// Shared memory (bytes from a 1024-byte-aligned base: the swizzle's period):
//   stage  kStages tiles of kTileKeys cache rows in KvTile layout
//   q      Q of the current token in QTile layout (16 rows)
//   p      per warpgroup: P of the tile, [64 keys][16 heads] bf16 (Oᵀ's B operand, MN-major)
//   half   per tile parity and warpgroup: its half of Sᵀ, [8 accumulator floats][128 threads]
//   red    per warpgroup: per-warp partial maxima and sums of each head, [kWarps][16] floats each
//   stats  l and m of each head at the end of a split
//   bars   per stage: the full barrier, then the empty one
constexpr int kPBytes = kNumHeads * kTileKeys * 2;
constexpr int kHalfBytes = sm90::kWarpgroupThreads * Acc::ne * 4;
constexpr int kRedBytes = 2 * kWarps * kNumHeads * 4;
constexpr int kOffStage = 0;
constexpr int kOffQ = kOffStage + kStages * KvTile::kBytes;
constexpr int kOffP = kOffQ + QTile::kBytes;
constexpr int kOffHalf = kOffP + kWarpgroups * kPBytes;
constexpr int kOffRed = kOffHalf + 2 * kWarpgroups * kHalfBytes;
constexpr int kOffStats = kOffRed + kWarpgroups * kRedBytes;
constexpr int kOffBars = kOffStats + 2 * kNumHeads * 4;
constexpr int kAlignSlack = KvTile::kAtomBytes;  // dynamic shared memory is only 16-byte aligned
constexpr int kSharedBytes = kOffBars + 2 * kStages * 8 + kAlignSlack;
static_assert(kSharedBytes <= 232448, "the plan exceeds sm_90's 227 KB per block");
static_assert(KvTile::kBytes % KvTile::kAtomBytes == 0 && kOffQ % KvTile::kAtomBytes == 0 &&
              QTile::kBoxBytes % QTile::kAtomBytes == 0 && kOffP % 128 == 0 &&
              kOffHalf % 128 == 0 && kOffBars % 8 == 0);

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
  int iter = 0;
  for (int64_t i = 0; i < w.q_len; ++i) {
    const TokenKeys k = w.token(i);
    for (int t = 0; t < k.tiles; ++t, ++iter) {
      const int s = iter % kStages;
      const auto phase = static_cast<uint32_t>((iter / kStages) & 1);
      mma::bulk_barrier_wait(&empty[s], phase ^ 1);  // a fresh barrier's "previous" phase is done
      unsigned char* dst = stages + s * KvTile::kBytes;
      const int64_t t0 = k.first + static_cast<int64_t>(t) * kTileKeys;
      const int n = k.keys_in(t);
      if (!paged) {
        if (lane == 0) {
          mma::bulk_barrier_expect(&full[s], KvTile::kBytes);
          const auto row = static_cast<int32_t>(w.row0 + t0);
#pragma unroll
          for (int box = 0; box < KvTile::kBoxes; ++box)
            sm90::tma_load_2d(dst + box * KvTile::kBoxBytes, map, box * KvTile::kBoxDims, row, &full[s]);
        }
      } else {
        if (lane == 0) mma::bulk_barrier_expect(&full[s], static_cast<uint32_t>(n * kRowBytes));
        __syncwarp();
        for (int r = lane; r < n; r += kWarpSize) {
          const auto row = static_cast<int32_t>(common::kv_row(a, w.b, t0 + r));
#pragma unroll
          for (int box = 0; box < KvTile::kBoxes; ++box)
            sm90::tma_load_2d(dst + box * KvTile::kBoxBytes + r * KvTile::kRowBytes, map,
                              box * KvTile::kBoxDims, row, &full[s]);
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

// Rows n .. kTileKeys - 1 of warpgroup w's value boxes (its Oᵀ chunks) set to zero: the copy left
// another request's rows or stale ones there, and P·V multiplies them by P = 0.
__device__ void zero_rows_past(unsigned char* kv, int n, int warpgroup, int wg_tid) {
  constexpr int kChunksPerRow = KvTile::kRowBytes / 16;
  const int per_box = (kTileKeys - n) * kChunksPerRow;
  for (int idx = wg_tid; idx < kVChunks * per_box; idx += sm90::kWarpgroupThreads) {
    const int box = warpgroup * kVChunks + idx / per_box;
    const int rest = idx % per_box;
    *reinterpret_cast<uint4*>(kv + box * KvTile::kBoxBytes + (n + rest / kChunksPerRow) * KvTile::kRowBytes +
                              (rest % kChunksPerRow) * 16) = uint4{0, 0, 0, 0};
  }
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
  Barrier* empty = full + kStages;
  const WorkItem w(a);

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mma::bulk_barrier_init(&full[s], 1);                // the producer's announcement
      mma::bulk_barrier_init(&empty[s], kConsumerWarps);  // one arrival per consumer warp
    }
  }
  common::block_sync();  // the only barrier of the whole block: the mbarriers are initialised
  if (tid >= kConsumerThreads) {
    produce(a, w, &kv_map, smem + kOffStage, full, empty);
    return;
  }

  const int wg = tid / sm90::kWarpgroupThreads;
  const int wg_tid = tid % sm90::kWarpgroupThreads;
  unsigned char* sq = smem + kOffQ;
  unsigned char* sp = smem + kOffP + wg * kPBytes;
  float* red_max = reinterpret_cast<float*>(smem + kOffRed + wg * kRedBytes);
  float* red_sum = red_max + kWarps * kNumHeads;
  float* stat_l = reinterpret_cast<float*>(smem + kOffStats);
  float* stat_m = stat_l + kNumHeads;
  static_assert(kWarpgroups == 2, "the halves of Sᵀ are exchanged between two warpgroups");
  // P [key][head] (heads contiguous) as Oᵀ's B operand read MN-major: a thread's two adjacent heads
  // of a key are one 32-bit store.
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};
  const float score_scale = a.score_scale;
  const int64_t part_base = a.qo_indptr[w.b] * static_cast<int64_t>(w.splits);

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

    for (int t = 0; t < keys.tiles; ++t, ++iter) {
      const int stage = iter % kStages;
      mma::bulk_barrier_wait(&full[stage], static_cast<uint32_t>((iter / kStages) & 1));
      unsigned char* kv = smem + kOffStage + stage * KvTile::kBytes;
      const int n = keys.keys_in(t);
      float* half = reinterpret_cast<float*>(smem + kOffHalf + (iter % 2) * kWarpgroups * kHalfBytes);
      float* own_half = half + wg * (kHalfBytes / 4) + wg_tid;
      const float* other_half = half + (1 - wg) * (kHalfBytes / 4) + wg_tid;

      // Each product's descriptors: one per operand and tile, advanced by byte offsets.
      const uint64_t k_desc = sm90::smem_descriptor_sw128(kv, KvTile::kKMajorLeading, KvTile::kStride);
      const uint64_t q_desc = sm90::smem_descriptor_sw128(sq, QTile::kKMajorLeading, QTile::kStride);
      const uint64_t v_desc = sm90::smem_descriptor_sw128(kv, KvTile::kLeading, KvTile::kStride);
      const uint64_t p_desc =
          sm90::smem_descriptor(sp, kPLayout.leading_bytes(), kPLayout.stride_bytes());

      // 1. Sᵀ = K Qᵀ, this warpgroup's half of the dims, then the other's added.
      Acc s;
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) s.x[l] = 0.0f;
      sm90::wgmma_fence();
#pragma unroll 6
      for (int k = 0; k < kQkSteps; ++k) {
        const int k0 = (wg * kQkSteps + k) * sm90::kWgK16;
        sm90::wgmma_bf16_m64n16k16<false>(s, sm90::descriptor_advance(k_desc, KvTile::k_major_start(k0)),
                                          sm90::descriptor_advance(q_desc, QTile::k_major_start(k0)), k > 0);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) own_half[l * sm90::kWarpgroupThreads] = s.x[l];
      consumer_sync();  // both halves written, and both Sᵀ products done with the tile's K
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) s.x[l] += other_half[l * sm90::kWarpgroupThreads];
      if (n < kTileKeys) zero_rows_past(kv, n, wg, wg_tid);

      // 2. Softmax step over the tile's keys for this thread's four heads.
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
        *reinterpret_cast<uint32_t*>(sp + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
            common::pack_bf16(quant::f32_to_bf16(common::round_to_bf16(p0)),
                              quant::f32_to_bf16(common::round_to_bf16(p1)));
      }
      reduce_heads<true>(sum, red_sum, wg);
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        l_run[c] = l_run[c] * alpha[c] + sum[c];
        m_run[c] = m_new[c];
      }
      fence_to_async();
      warpgroup_sync(wg);  // this warpgroup's P and zeroed rows complete and visible to its products

      // 3. Oᵀ = Oᵀ·α + Vᵀ Pᵀ over this warpgroup's value dims.
#pragma unroll
      for (int v = 0; v < kVChunks; ++v)
#pragma unroll
        for (int l = 0; l < Acc::ne; ++l) o[v].x[l] *= alpha[head_slot(l)];
      sm90::wgmma_fence();
#pragma unroll
      for (int v = 0; v < kVChunks; ++v)
#pragma unroll
        for (int k = 0; k < kPvSteps; ++k) {
          const int k0 = k * sm90::kWgK16;
          sm90::wgmma_bf16_m64n16k16<true, true>(
              o[v], sm90::descriptor_advance(v_desc, KvTile::mn_major_start((wg * kVChunks + v) * sm90::kWgM, k0)),
              sm90::descriptor_advance(p_desc, kPLayout.offset_bytes(k0, 0)), true);
        }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
      if (lane == 0) mma::bulk_barrier_arrive(&empty[stage]);  // this warp is done with the tile
    }

    // The split's output: o = fl32(acc / l), lse = fl32(m + ln l); a query with no visible key in
    // the split writes o = 0, lse = -inf.
    const bool empty_split = keys.tiles == 0;
    if (tid < kWarpSize && lane / 4 == 0)  // warpgroup 0's: both hold the same statistics
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int h = 8 * (c / 2) + 2 * lane + c % 2;
        stat_l[h] = l_run[c];
        stat_m[h] = m_run[c];
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
    consumer_sync();  // stats and Q are reused by the next token
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
