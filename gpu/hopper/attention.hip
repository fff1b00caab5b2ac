// The Hopper attention kernel (issue 10): one block of two warpgroups per (request, split) work
// item, all 16 heads, the split's keys in tiles of kTileKeys rows through a two-stage copy ring, both
// products on warpgroup MMA (gpu/sm90/wgmma.h) reading one shared tile of cache rows. The two
// warpgroups share each tile and halve each product's chain of dependent MMAs:
//   1. Sᵀ (64 keys x 16 heads) = K Qᵀ: warpgroup w sums dims 288 w .. 288 w + 287 (18 K-major steps
//      of m64n16k16); the halves meet in shared memory and both warpgroups form S = S₀ + S₁ (the
//      same bits in both: float addition commutes);
//   2. softmax step (ref/decode_emulated.h with softmax_tile = kTileKeys), computed by both
//      warpgroups on the same values: s = fl32(dot · score scale), masked keys -inf; m' = max(m,
//      tile max); p = e^(s - m'); l = l·α + Σp (unrounded p); P rounded to bf16 and stored, by
//      each warpgroup for itself, as the K-major B operand [head][key];
//   3. Oᵀ (512 dims x 16 heads) = Oᵀ·α + Vᵀ Pᵀ: warpgroup w owns value dims 256 w .. 256 w + 255,
//      4 chunks of 64 dims x 4 transposed-A steps over the tile's keys.
// A thread's elements of Sᵀ and of every Oᵀ chunk lie in the same four heads (the accumulator's
// columns), so α and l stay in registers. Every operand value is a bf16 value and every product
// exact; only the float32 summation order differs from the reference (the kernel bound's delta_acc).
// Not yet: the producer warp and TMA ring, fp8 / MXFP4 caches, heads x q_len packed into N (tokens
// run one after another), the persistent schedule.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/operands.h"
#include "gpu/common/rounding.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/kernels.h"
#include "gpu/platform.h"
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
using Tile = sm90::DecodeTileLayout;
using Acc = sm90::WgTileC64x16;

constexpr int kThreads = kWarpgroups * sm90::kWarpgroupThreads;
static_assert(kTileKeys == sm90::kWgM);
constexpr int kWarps = sm90::kWarpgroupWarps;                  // per warpgroup
constexpr int kQkSteps = kQkDim / sm90::kWgK16 / kWarpgroups;  // 18 per warpgroup
constexpr int kVChunks = kVDim / sm90::kWgM / kWarpgroups;     // 4 chunks of 64 value dims each
constexpr int kPvSteps = kTileKeys / sm90::kWgK16;             // 4
static_assert(kQkSteps * sm90::kWgK16 * kWarpgroups == kQkDim &&
              kVChunks * sm90::kWgM * kWarpgroups == kVDim);
constexpr float kNegInf = -__builtin_huge_valf();

// Shared memory (bytes, each region 128-byte aligned):
//   q      Q of the current token in Tile layout (16 rows)
//   stage  kStages tiles of kTileKeys cache rows in Tile layout
//   p      per warpgroup: P of the tile, [16 heads][64 keys] bf16 in K-major layout (Oᵀ's B operand)
//   half   per warpgroup: its half of Sᵀ, [8 accumulator floats][128 threads] (conflict-free)
//   red    per warpgroup: per-warp partial maxima and sums of each head, [kWarps][16] floats each
//   stats  l and m of each head at the end of a split
constexpr int kQBytes = (kNumHeads / sm90::kCoreRows) * Tile::kGroupBytes;
constexpr int kStageBytes = (kTileKeys / sm90::kCoreRows) * Tile::kGroupBytes;
constexpr int kPBytes = kNumHeads * kTileKeys * 2;
constexpr int kHalfBytes = sm90::kWarpgroupThreads * Acc::ne * 4;
constexpr int kRedBytes = 2 * kWarps * kNumHeads * 4;
constexpr int kOffQ = 0;
constexpr int kOffStage = kOffQ + kQBytes;
constexpr int kOffP = kOffStage + kStages * kStageBytes;
constexpr int kOffHalf = kOffP + kWarpgroups * kPBytes;
constexpr int kOffRed = kOffHalf + kWarpgroups * kHalfBytes;
constexpr int kOffStats = kOffRed + kWarpgroups * kRedBytes;
constexpr int kSharedBytes = kOffStats + 2 * kNumHeads * 4;
static_assert(kSharedBytes <= 232448, "the plan exceeds sm_90's 227 KB per block");
static_assert(kOffStage % 128 == 0 && kOffP % 128 == 0 && kStageBytes % 128 == 0 &&
              kPBytes % 128 == 0 && kOffHalf % 128 == 0);

__device__ __forceinline__ void copy_16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}
// Generic-proxy writes (cp.async, st.shared) made visible to wgmma's asynchronous proxy; a block
// barrier after it shows every thread's.
__device__ __forceinline__ void fence_to_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Barrier of one warpgroup's 128 threads (hardware barrier 1 + w; 0 is the block's).
__device__ __forceinline__ void warpgroup_sync(int warpgroup) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + warpgroup), "n"(sm90::kWarpgroupThreads) : "memory");
}

// The largest of two scores the reference's way (a NaN second operand is skipped).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }

// The copies of one tile: consecutive threads copy consecutive 16-byte chunks of a row, so a warp
// reads 512 contiguous bytes of the cache. (Device run 15 timed three orders at 256 x 8192: 8 rows
// x 4 chunks per warp 1199 µs, 4 x 8 1196, this one 1177: the order is not what limits the kernel.)
// The address arithmetic of 18 copies per thread was a third of the kernel's instructions, so
// each thread's copy slots are planned once: for a contiguous cache a slot is a fixed element
// offset from the tile's first row and a fixed place in the stage, and a tile costs a few adds
// per copy (device run 15: 25 % fewer instructions, 1 % faster: the issue rate is not what limits
// the kernel, docs/PERF.md). A paged cache looks each row up in the page table (issue_paged_tile).
constexpr int kCopiesPerThread = kTileKeys * Tile::kChunks / kThreads;  // 18
static_assert(kCopiesPerThread * kThreads == kTileKeys * Tile::kChunks);

struct CopySlots {
  uint32_t stage_offset[kCopiesPerThread];  // bytes into the stage
  int32_t source_offset[kCopiesPerThread];  // elements from the tile's first cache row
};

__device__ __forceinline__ CopySlots plan_copies() {
  CopySlots c;
#pragma unroll
  for (int k = 0; k < kCopiesPerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * kThreads;
    const int r = i / Tile::kChunks, chunk = i % Tile::kChunks;
    c.stage_offset[k] = static_cast<uint32_t>(Tile::chunk_offset_bytes(r, chunk));
    c.source_offset[k] = r * kQkDim + chunk * 8;
  }
  return c;
}

// Keys t0 .. t0 + n - 1 of a contiguous cache (the request's first row is row0) into `dst`, rows
// past n zero-filled: a slot's row is past n exactly when its offset is past n rows.
__device__ __forceinline__ void issue_contiguous_tile(const AttentionArgs& a, const CopySlots& c,
                                                      int64_t row0, int64_t t0, int n, unsigned char* dst) {
  const uint16_t* tile = a.kv_bf16 + (row0 + t0) * kQkDim;
  const int32_t end = n * kQkDim;
#pragma unroll
  for (int k = 0; k < kCopiesPerThread; ++k) {
    const bool valid = c.source_offset[k] < end;
    copy_16(dst + c.stage_offset[k], valid ? tile + c.source_offset[k] : a.kv_bf16, valid);
  }
}

// The same through the page table (each row looked up).
__device__ void issue_paged_tile(const AttentionArgs& a, int64_t b, int64_t t0, int n, unsigned char* dst) {
  for (int i = static_cast<int>(threadIdx.x); i < kTileKeys * Tile::kChunks; i += kThreads) {
    const int r = i / Tile::kChunks, chunk = i % Tile::kChunks;
    const bool valid = r < n;
    const uint16_t* src = valid ? a.kv_bf16 + common::kv_row(a, b, t0 + r) * kQkDim + chunk * 8 : a.kv_bf16;
    copy_16(dst + Tile::chunk_offset_bytes(r, chunk), src, valid);
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

template <problem::KvFormat Kv, problem::PFormat P, problem::SoftmaxBase Base>
__global__ void __launch_bounds__(kThreads, 1) hopper_attention_kernel(AttentionArgs a) {
  static_assert(Kv == problem::KvFormat::bf16 && P == problem::PFormat::bf16 &&
                Base == problem::SoftmaxBase::e, "first version: a16w16 only (instances.h)");
  extern __shared__ uint4 shared_words[];
  auto* smem = reinterpret_cast<unsigned char*>(shared_words);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize;
  const int wg = tid / sm90::kWarpgroupThreads;
  const int wg_tid = tid % sm90::kWarpgroupThreads;
  unsigned char* sq = smem + kOffQ;
  unsigned char* sp = smem + kOffP + wg * kPBytes;
  float* own_half = reinterpret_cast<float*>(smem + kOffHalf + wg * kHalfBytes) + wg_tid;
  const float* other_half = reinterpret_cast<const float*>(smem + kOffHalf + (1 - wg) * kHalfBytes) + wg_tid;
  float* red_max = reinterpret_cast<float*>(smem + kOffRed + wg * kRedBytes);
  float* red_sum = red_max + kWarps * kNumHeads;
  float* stat_l = reinterpret_cast<float*>(smem + kOffStats);
  float* stat_m = stat_l + kNumHeads;
  const auto stage = [&](int s) { return smem + kOffStage + s * kStageBytes; };
  static_assert(kWarpgroups == 2, "the halves of Sᵀ are exchanged between two warpgroups");
  // P [key][head] (heads contiguous) as Oᵀ's B operand read MN-major: a thread's two adjacent heads
  // of a key are one 32-bit store.
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};

  const float score_scale = a.score_scale;
  const bool single_pass = a.num_splits == 0;
  const int splits = a.num_splits > 0 ? a.num_splits : 1;
  const int64_t b = blockIdx.x / splits;
  const int split = static_cast<int>(blockIdx.x % splits);
  const int64_t row0 = a.kv_indptr[b];
  const int64_t len = a.kv_indptr[b + 1] - row0;
  const int64_t q_len = a.qo_indptr[b + 1] - a.qo_indptr[b];
  const int64_t part_base = a.qo_indptr[b] * static_cast<int64_t>(splits);
  const int64_t per_split = single_pass ? len : (len + splits - 1) / splits;
  const int64_t first = split * per_split < len ? split * per_split : len;
  const int64_t end_of_split = first + per_split < len ? first + per_split : len;
  const CopySlots slots = plan_copies();
  const auto issue_tile = [&](int64_t t0, int n, unsigned char* dst) {
    if (a.kv_indices == nullptr) issue_contiguous_tile(a, slots, row0, t0, n, dst);
    else issue_paged_tile(a, b, t0, n, dst);
  };

  for (int64_t i = 0; i < q_len; ++i) {
    const int64_t token = a.qo_indptr[b] + i;
    const int64_t visible_raw = len - q_len + i + 1;  // causal rule (problem/batch.h)
    const int64_t visible = visible_raw > 0 ? visible_raw : 0;
    const int64_t end = end_of_split < visible ? end_of_split : visible;
    const int64_t split_keys = end > first ? end - first : 0;
    const int tiles = static_cast<int>((split_keys + kTileKeys - 1) / kTileKeys);
    const auto keys_in = [&](int t) {
      const int64_t left = end - (first + static_cast<int64_t>(t) * kTileKeys);
      return static_cast<int>(left < kTileKeys ? left : kTileKeys);
    };

    // Q of the token and the first tile, one copy group.
    for (int idx = tid; idx < kNumHeads * Tile::kChunks; idx += kThreads) {
      const int h = (idx / (sm90::kCoreRows * Tile::kChunks)) * sm90::kCoreRows + idx % sm90::kCoreRows;
      const int chunk = idx / sm90::kCoreRows % Tile::kChunks;
      copy_16(sq + Tile::chunk_offset_bytes(h, chunk), a.q_bf16 + (token * kNumHeads + h) * kQkDim + chunk * 8,
              true);
    }
    if (tiles > 0) issue_tile(first, keys_in(0), stage(0));
    copy_commit();

    float m_run[4], l_run[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) m_run[c] = kNegInf, l_run[c] = 0.0f;
    Acc o[kVChunks];
#pragma unroll
    for (int v = 0; v < kVChunks; ++v)
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) o[v].x[l] = 0.0f;

    for (int t = 0; t < tiles; ++t) {
      // Tile t has landed; the barrier also ends tile t - 1 (its stage, P and the reductions are
      // free again).
      copy_wait<0>();
      fence_to_async();
      common::block_sync();
      if (t + 1 < tiles)
        issue_tile(first + static_cast<int64_t>(t + 1) * kTileKeys, keys_in(t + 1),
                   stage((t + 1) % kStages));
      copy_commit();
      const unsigned char* kv = stage(t % kStages);
      const int n = keys_in(t);

      // Each product's descriptors: one per operand and tile, advanced by byte offsets.
      const uint64_t k_desc = sm90::smem_descriptor(kv + Tile::k_major_start(0, wg * kQkSteps * sm90::kWgK16),
                                                    Tile::kKMajorLeading, Tile::kKMajorStride);
      const uint64_t q_desc = sm90::smem_descriptor(sq + Tile::k_major_start(0, wg * kQkSteps * sm90::kWgK16),
                                                    Tile::kKMajorLeading, Tile::kKMajorStride);
      const uint64_t v_desc = sm90::smem_descriptor(kv + Tile::mn_major_start(wg * kVChunks * sm90::kWgM, 0),
                                                    Tile::kMnMajorLeading, Tile::kMnMajorStride);
      const uint64_t p_desc =
          sm90::smem_descriptor(sp, kPLayout.leading_bytes(), kPLayout.stride_bytes());

      // 1. Sᵀ = K Qᵀ, this warpgroup's half of the dims, then the other's added.
      Acc s;
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) s.x[l] = 0.0f;
      sm90::wgmma_fence();
#pragma unroll 6
      for (int k = 0; k < kQkSteps; ++k) {
        constexpr int kStepBytes = Tile::k_major_start(0, sm90::kWgK16);  // the same in Q's tile
        sm90::wgmma_bf16_m64n16k16<false>(s, sm90::descriptor_advance(k_desc, k * kStepBytes),
                                          sm90::descriptor_advance(q_desc, k * kStepBytes), k > 0);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) own_half[l * sm90::kWarpgroupThreads] = s.x[l];
      common::block_sync();  // both halves written
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) s.x[l] += other_half[l * sm90::kWarpgroupThreads];

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
      warpgroup_sync(wg);  // this warpgroup's P complete and visible to its products

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
              o[v], sm90::descriptor_advance(v_desc, Tile::mn_major_start(v * sm90::kWgM, k0)),
              sm90::descriptor_advance(p_desc, kPLayout.offset_bytes(k0, 0)), true);
        }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
    }
    copy_wait<0>();  // nothing in flight into Q or a stage the next token reuses

    // The split's output: o = fl32(acc / l), lse = fl32(m + ln l); a query with no visible key in
    // the split writes o = 0, lse = -inf.
    const bool empty = tiles == 0;
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
        const float out = empty ? 0.0f : o[v].x[l] / l_run[head_slot(l)];
        const int64_t row = token * kNumHeads + h;
        if (single_pass) {
          a.out[row * kVDim + d] = quant::f32_to_bf16(out);
        } else {
          const bool bf16_partial = a.partial == problem::PartialFormat::bf16;
          a.part_o[((part_base + i * splits + split) * kNumHeads + h) * kVDim + d] =
              bf16_partial ? common::round_to_bf16(out) : out;
        }
      }
    common::block_sync();
    if (tid < kNumHeads) {
      const float lse = empty ? kNegInf : stat_m[tid] + common::log_base(false, stat_l[tid]);
      if (single_pass) {
        if (a.lse != nullptr) a.lse[token * kNumHeads + tid] = common::natural_lse(false, lse);
      } else {
        a.part_lse[(part_base + i * splits + split) * kNumHeads + tid] = lse;
      }
    }
    common::block_sync();  // stats, Q and the stages are reused by the next token
  }
}

template <std::size_t I>
void launch_instance(const AttentionArgs& args, int64_t blocks, hipStream_t stream) {
  constexpr common::Instance in = kInstances[I];
  constexpr auto kernel = hopper_attention_kernel<in.kv, in.p, in.base>;
  // Above 48 KB a kernel must opt in; once per instance (a runtime call, legal during capture).
  static const bool opted_in = [] {
    MLACHECK_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                           hipFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    return true;
  }();
  static_cast<void>(opted_in);
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSharedBytes, stream>>>(args);
}

template <std::size_t... I>
void dispatch(std::size_t instance, const AttentionArgs& args, int64_t blocks, hipStream_t stream,
              std::index_sequence<I...>) {
  ((instance == I ? launch_instance<I>(args, blocks, stream) : void()), ...);
}

}  // namespace

void launch_attention(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                      StreamHandle stream) {
  if (blocks == 0) return;
  dispatch(instance, args, blocks, static_cast<hipStream_t>(stream),
           std::make_index_sequence<kInstances.size()>());
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace mlacheck::gpu::hopper
