// The Hopper attention kernel, first version (issue 10): one warpgroup per (request, split) work
// item, all 16 heads, the split's keys in tiles of kTileKeys rows through a two-stage copy ring, both
// products on warpgroup MMA (gpu/sm90/wgmma.h) reading one shared tile of cache rows:
//   1. Sᵀ (64 keys x 16 heads) = K Qᵀ: 36 K-major steps of m64n16k16 over the 576 dims;
//   2. softmax step (ref/decode_emulated.h with softmax_tile = kTileKeys): s = fl32(dot · score
//      scale), masked keys -inf; m' = max(m, tile max); p = e^(s - m'); l = l·α + Σp (unrounded p);
//      P rounded to bf16 and stored as the K-major B operand [head][key];
//   3. Oᵀ (512 dims x 16 heads) = Oᵀ·α + Vᵀ Pᵀ: 8 chunks of 64 dims x 4 transposed-A steps over the
//      tile's keys, reading the same tile's first 512 dims.
// A thread's elements of Sᵀ and of every Oᵀ chunk lie in the same four heads (the accumulator's
// columns), so α and l stay in registers. Every operand value is a bf16 value and every product
// exact; only the float32 summation order differs from the reference (the kernel bound's delta_acc).
// Not yet: the producer warp and TMA ring, two consumer warpgroups, fp8 / MXFP4 caches, heads x
// q_len packed into N (tokens run one after another), the persistent schedule.
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

static_assert(kThreads == sm90::kWarpgroupThreads && kTileKeys == sm90::kWgM);
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kQkSteps = kQkDim / sm90::kWgK16;     // 36
constexpr int kVChunks = kVDim / sm90::kWgM;        // 8 chunks of 64 value dims
constexpr int kPvSteps = kTileKeys / sm90::kWgK16;  // 4
constexpr float kNegInf = -__builtin_huge_valf();

// Shared memory (bytes, each region 128-byte aligned):
//   q      Q of the current token in Tile layout (16 rows)
//   stage  kStages tiles of kTileKeys cache rows in Tile layout
//   p      P of the tile, [16 heads][64 keys] bf16 in K-major layout (the B operand of Oᵀ)
//   red    per-warp partial maxima and sums of each head, [kWarps][16] floats each
//   stats  l and m of each head at the end of a split
constexpr int kQBytes = (kNumHeads / sm90::kCoreRows) * Tile::kGroupBytes;
constexpr int kStageBytes = (kTileKeys / sm90::kCoreRows) * Tile::kGroupBytes;
constexpr int kPBytes = kNumHeads * kTileKeys * 2;
constexpr int kOffQ = 0;
constexpr int kOffStage = kOffQ + kQBytes;
constexpr int kOffP = kOffStage + kStages * kStageBytes;
constexpr int kOffRed = kOffP + kPBytes;
constexpr int kOffStats = kOffRed + 2 * kWarps * kNumHeads * 4;
constexpr int kSharedBytes = kOffStats + 2 * kNumHeads * 4;
static_assert(kSharedBytes <= 232448, "the plan exceeds sm_90's 227 KB per block");
static_assert(kOffStage % 128 == 0 && kOffP % 128 == 0 && kStageBytes % 128 == 0);

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

// The largest of two scores the reference's way (a NaN second operand is skipped).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }

// Queues the copies of keys t0 .. t0 + n - 1 into `dst` (rows past n zero-filled): 8 consecutive
// threads fill one core matrix (8 rows of one 16-byte chunk), so each warp writes 512 contiguous
// bytes per instruction.
__device__ void issue_tile(const AttentionArgs& a, int64_t b, int64_t row0, int64_t t0, int n,
                           unsigned char* dst) {
  for (int i = static_cast<int>(threadIdx.x); i < kTileKeys * Tile::kChunks; i += kThreads) {
    const int r = (i / (sm90::kCoreRows * Tile::kChunks)) * sm90::kCoreRows + i % sm90::kCoreRows;
    const int chunk = i / sm90::kCoreRows % Tile::kChunks;
    const bool valid = r < n;
    const int64_t row = a.kv_indices == nullptr ? row0 + t0 + r : common::kv_row(a, b, t0 + r);
    const uint16_t* src = valid ? a.kv_bf16 + row * kQkDim + chunk * 8 : a.kv_bf16;
    copy_16(dst + Tile::chunk_offset_bytes(r, chunk), src, valid);
  }
}

// Max (Sum = false) or sum over the 64 keys of each of this thread's four heads: within the thread
// (its two rows), across the 8 lanes of a column (lane bits 2..4), across the 4 warps by shared
// memory. Every thread gets the result for its heads. Contains a block barrier.
template <bool Sum>
__device__ void reduce_heads(float (&v)[4], float* red) {
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int mask = 4; mask <= 16; mask *= 2) {
      const float other = shfl_xor<kWarpSize>(v[c], mask);
      v[c] = Sum ? v[c] + other : max_of(v[c], other);
    }
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  if (lane < 4)
#pragma unroll
    for (int c = 0; c < 4; ++c) red[warp * kNumHeads + 8 * (c / 2) + 2 * lane + c % 2] = v[c];
  common::block_sync();
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
  unsigned char* sq = smem + kOffQ;
  unsigned char* sp = smem + kOffP;
  float* red_max = reinterpret_cast<float*>(smem + kOffRed);
  float* red_sum = red_max + kWarps * kNumHeads;
  float* stat_l = reinterpret_cast<float*>(smem + kOffStats);
  float* stat_m = stat_l + kNumHeads;
  const auto stage = [&](int s) { return smem + kOffStage + s * kStageBytes; };
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize;
  constexpr sm90::KMajorLayout kPLayout{kTileKeys};  // P [head][key] as Oᵀ's B operand

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
    if (tiles > 0) issue_tile(a, b, row0, first, keys_in(0), stage(0));
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
        issue_tile(a, b, row0, first + static_cast<int64_t>(t + 1) * kTileKeys, keys_in(t + 1),
                   stage((t + 1) % kStages));
      copy_commit();
      const unsigned char* kv = stage(t % kStages);
      const int n = keys_in(t);

      // 1. Sᵀ = K Qᵀ.
      Acc s;
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) s.x[l] = 0.0f;
      sm90::wgmma_fence();
#pragma unroll 4
      for (int k = 0; k < kQkSteps; ++k) {
        const int k0 = k * sm90::kWgK16;
        sm90::wgmma_bf16_m64n16k16<false>(
            s, sm90::smem_descriptor(kv + Tile::k_major_start(0, k0), Tile::kKMajorLeading, Tile::kKMajorStride),
            sm90::smem_descriptor(sq + Tile::k_major_start(0, k0), Tile::kKMajorLeading, Tile::kKMajorStride),
            k > 0);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();

      // 2. Softmax step over the tile's keys for this thread's four heads.
      float m_tile[4] = {kNegInf, kNegInf, kNegInf, kNegInf};
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) {
        s.x[l] = Acc::get_i(l) < n ? s.x[l] * score_scale : kNegInf;
        m_tile[head_slot(l)] = max_of(m_tile[head_slot(l)], s.x[l]);
      }
      reduce_heads<false>(m_tile, red_max);
      float alpha[4], m_new[4], sum[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        m_new[c] = max_of(m_run[c], m_tile[c]);
        alpha[c] = expf(m_run[c] - m_new[c]);  // 0 on the first tile
        sum[c] = 0.0f;
      }
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) {
        const float p = expf(s.x[l] - m_new[head_slot(l)]);  // masked: e^-inf = 0
        sum[head_slot(l)] += p;
        const int head = Acc::get_j(l), key = Acc::get_i(l);
        *reinterpret_cast<uint16_t*>(sp + kPLayout.offset_bytes(head, key)) =
            quant::f32_to_bf16(common::round_to_bf16(p));
      }
      reduce_heads<true>(sum, red_sum);
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        l_run[c] = l_run[c] * alpha[c] + sum[c];
        m_run[c] = m_new[c];
      }
      fence_to_async();
      common::block_sync();  // P complete and visible to the products

      // 3. Oᵀ = Oᵀ·α + Vᵀ Pᵀ.
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
          sm90::wgmma_bf16_m64n16k16<true>(
              o[v],
              sm90::smem_descriptor(kv + Tile::mn_major_start(v * sm90::kWgM, k0), Tile::kMnMajorLeading,
                                    Tile::kMnMajorStride),
              sm90::smem_descriptor(sp + kPLayout.offset_bytes(0, k0), kPLayout.leading_bytes(),
                                    kPLayout.stride_bytes()),
              true);
        }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
    }
    copy_wait<0>();  // nothing in flight into Q or a stage the next token reuses

    // The split's output: o = fl32(acc / l), lse = fl32(m + ln l); a query with no visible key in
    // the split writes o = 0, lse = -inf.
    const bool empty = tiles == 0;
    if (tid < kWarpSize && lane / 4 == 0)
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
        const int d = v * sm90::kWgM + Acc::get_i(l);
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
