// The fast attention kernel: all 16 heads of one (request, split) work item per block (split-K:
// one item per block; persistent: items taken from a counter), the split's keys in tiles of
// kTileKeys through a multi-stage global -> shared copy pipeline, both products on the matrix
// units (gpu/mma/mma.h). Per tile, following ref/decode_emulated.h with softmax_tile = kTileKeys:
//   1. Q·Kᵀ: warp w multiplies dim group w % 4 (a quarter of the 576 dims; its Q operands stay in
//      registers for the whole split) by its key group's keys; the four partial score tiles are
//      summed in shared memory.
//   2. Softmax step (kThreads / 16 threads per head): s = fl32(dot · score scale), masked keys
//      -inf; m' = max(m, tile max); p = b^(s - m'); l = l·α + Σp (unrounded p); P rounded to the
//      recipe's format.
//   3. P·V: warp w owns 512 / kWarps value dims; acc = acc·α, then acc += P·V.
// Every operand value is exactly a bf16 value (bf16, fp8 and E2M1·2^e caches; P in bf16 or fp8),
// so one bf16 product is exact; an f16 P (a4w4) is split into two bf16 parts whose sum is exactly
// P (11 significant bits = 8 + 3), and V is rounded to f16 (its P·V operand type) in registers.
// Recipes whose Q, KV and P are all fp8 (a8w8*) run on f16 operands instead: fp8 values are f16
// values, and e4m3 -> f16 is one conversion per pair where e4m3 -> bf16 takes several.
// Products are exact; only the float32 summation order differs from the reference, which the
// gate's kernel bound allows for.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
#include "gpu/common/operand_decode.h"
#include "gpu/common/operands.h"
#include "gpu/common/owner.h"
#include "gpu/common/rounding.h"
#include "gpu/common/vendor_math.h"
#include "gpu/fast/config.h"
#include "gpu/fast/instances.h"
#include "gpu/fast/kernels.h"
#include "gpu/fast/traits.h"
#include "gpu/mma/mma.h"
#include "gpu/platform.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/fp8.h"

namespace mlacheck::gpu::fast {
namespace {

using common::AttentionArgs;
using common::block_sync;
using common::f16_bits;
using problem::KvFormat;
using problem::PFormat;
using problem::SoftmaxBase;
using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;

#if defined(MLACHECK_GPU_PLATFORM_AMD)
constexpr int kWarps = kWarpsAmd;
#else
constexpr int kWarps = kWarpsNvidia;
#endif
constexpr int kThreads = kWarps * kWarpSize;
static_assert(mma::kM == kNumHeads, "the 16 heads are the rows of one matrix tile");
constexpr int kQkSteps = kQkDim / mma::kK16;          // 36 products along the 576 dims
// Q·Kᵀ: warp w takes dim group w % kDimGroups (a quarter of the 576 dims, whose Q operands it
// keeps in registers) and key group w / kDimGroups of the tile.
static_assert(kQkSteps % kDimGroups == 0 && kWarps % kDimGroups == 0);
constexpr int kQkStepsPerWarp = kQkSteps / kDimGroups;  // 9
constexpr int kKeyGroups = kWarps / kDimGroups;
constexpr int kKeysPerWarp = kTileKeys / kKeyGroups;
static_assert(kKeysPerWarp % mma::kN == 0);
constexpr int kKeyTiles = kKeysPerWarp / mma::kN;       // score tiles per warp
constexpr int kVDimsPerWarp = kVDim / kWarps;         // 128
static_assert(kVDimsPerWarp % mma::kN == 0);
constexpr int kVTiles = kVDimsPerWarp / mma::kN;      // accumulator tiles per warp
constexpr int kPvSteps = kTileKeys / mma::kK16;       // 4
constexpr int kThreadsPerHead = kThreads / kNumHeads;  // softmax threads of one head
static_assert(divides_warp(kThreadsPerHead) && kThreads % kNumHeads == 0);
constexpr int kKeysPerThread = kTileKeys / kThreadsPerHead;
static_assert(kTileKeys % kThreadsPerHead == 0);
constexpr float kNegInf = -__builtin_huge_valf();

// The largest of two scores the reference's way (std::max: a NaN second operand is skipped).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }

// An f16 P as the two bf16 values P·V multiplies: P rounded to f16, its high bf16 part (RNE), and
// the exact rest (11 significant bits = 8 + at most 3).
__device__ __forceinline__ void f16_parts(float p, uint16_t& hi, uint16_t& lo) {
  const float rounded = common::round_to_f16(p);
  hi = quant::f32_to_bf16(rounded);
  lo = quant::f32_to_bf16(rounded - quant::bf16_to_f32(hi));
}

// A V operand rounded to f16 (its P·V operand type for f16 P), as bf16 again: exact, since V values
// carry at most 2 significant bits after f16 rounding (E2M1) and f16 values round-trip through
// float32.
__device__ __forceinline__ uint32_t round_pair_to_f16(uint32_t w) {
  const float lo = common::round_to_f16(common::lo_bf16(w));
  const float hi = common::round_to_f16(common::hi_bf16(w));
  return mma::pack_pair(lo, hi);
}

template <KvFormat Kv>
struct Smem {
  uint16_t* q;
  uint8_t* raw;
  uint16_t* tile;
  float* s_part;
  uint16_t* p_hi;
  uint16_t* p_lo;
  float* alpha;
  float* l;
  float* m;
  __device__ explicit Smem(uint8_t* base) {
    using T = Traits<Kv>;
    q = reinterpret_cast<uint16_t*>(base + T::kQ);
    raw = base + T::kRaw;
    tile = reinterpret_cast<uint16_t*>(base + T::kTile);
    s_part = reinterpret_cast<float*>(base + T::kSPart);
    p_hi = reinterpret_cast<uint16_t*>(base + T::kP);
    p_lo = p_hi + kNumHeads * kPStride;
    alpha = reinterpret_cast<float*>(base + T::kStats);
    l = alpha + kNumHeads;
    m = l + kNumHeads;
  }
  __device__ uint8_t* stage(int s) const { return raw + static_cast<std::size_t>(s) * Traits<Kv>::kStageBytes; }
  // The bf16 K/V tile the products read for the stage just landed.
  __device__ const uint16_t* kv_tile(int s) const {
    if constexpr (Traits<Kv>::kDecodes) return tile;
    else return reinterpret_cast<const uint16_t*>(stage(s));
  }
};

// Which keys a block works on.
struct Range {
  int64_t request, token;
  int64_t first, end;  // visible keys of the split for this token: [first, end)
};

// Queues the copies of keys t0 .. t0 + n - 1 (rows past n are zero-filled) into stage `dst`;
// row0: the request's first cache row when the cache is contiguous (kv_indptr[b], read once).
template <KvFormat Kv>
__device__ void issue_tile(const AttentionArgs& a, int64_t b, int64_t row0, int64_t t0, int n,
                           uint8_t* dst) {
  constexpr int kRowBytes = Kv == KvFormat::bf16 ? kQkDim * 2 : Kv == KvFormat::fp8 ? kQkDim
                                                                                  : problem::kMxfp4RowBytes;
  constexpr int kChunks = kRowBytes / 16;
  const uint8_t* base = Kv == KvFormat::bf16  ? reinterpret_cast<const uint8_t*>(a.kv_bf16)
                        : Kv == KvFormat::fp8 ? a.kv_fp8
                                              : a.kv_mxfp4;
  for (int c = static_cast<int>(threadIdx.x); c < kTileKeys * kChunks; c += kThreads) {
    const int r = c / kChunks;
    const int k = c - r * kChunks;
    bool valid = r < n;
    int64_t row = a.kv_indices == nullptr ? row0 + t0 + r : common::kv_row(a, b, t0 + r);
    if (MLACHECK_MUTANT(a, read_past_last_key) && r == n && n > 0) {  // gpu/mutants.h
      valid = true;
      row = (a.kv_indices == nullptr ? row0 + t0 + n - 1 : common::kv_row(a, b, t0 + n - 1)) + 1;
    }
    const uint8_t* src = valid ? base + row * kRowBytes + k * 16 : base;
    mma::async_copy_16(dst + r * Traits<Kv>::kRawRowBytes + k * 16, src, valid);
  }
}

// MXFP4 block scales go through registers (rows are 18 bytes: not 16-byte copies): loaded when the
// tile's copies are issued, stored to its stage after the current tile's products.
constexpr int kScaleBytesPerThread = (kTileKeys * problem::kMxfp4RowScales + kThreads - 1) / kThreads;
struct ScalePrefetch {
  uint8_t v[kScaleBytesPerThread];
};
__device__ void load_scales(const AttentionArgs& a, int64_t b, int64_t t0, int n, ScalePrefetch& s) {
#pragma unroll
  for (int i = 0; i < kScaleBytesPerThread; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = idx / problem::kMxfp4RowScales;
    const int j = idx - r * problem::kMxfp4RowScales;
    s.v[i] = r < n && r < kTileKeys
                 ? a.kv_mxfp4_scale[common::kv_row(a, b, t0 + r) * problem::kMxfp4RowScales + j]
                 : uint8_t{127};  // 2^0 for the zero-filled rows: their values stay 0
  }
}
__device__ void store_scales(const ScalePrefetch& s, uint8_t* stage) {
  uint8_t* dst = stage + kTileKeys * kMxfp4RowStride;
#pragma unroll
  for (int i = 0; i < kScaleBytesPerThread; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    if (idx < kTileKeys * problem::kMxfp4RowScales) dst[idx] = s.v[i];
  }
}

// Decodes a landed fp8 / MXFP4 stage to the operand tile (8 values = 16 bytes per step): f16 for
// the all-fp8 recipes (F16), bf16 otherwise.
template <KvFormat Kv, bool F16>
__device__ void decode_tile([[maybe_unused]] const AttentionArgs& a, const uint8_t* stage,
                            uint16_t* tile) {
  constexpr int kGroups = kQkDim / 8;
  [[maybe_unused]] const bool e4m3fn = a.fp8 == quant::Fp8Format::e4m3fn;
  for (int c = static_cast<int>(threadIdx.x); c < kTileKeys * kGroups; c += kThreads) {
    const int r = c / kGroups;
    const int g = c - r * kGroups;
    uint32_t w[4];
    if constexpr (Kv == KvFormat::fp8) {
      const uint2 codes = *reinterpret_cast<const uint2*>(stage + r * kFp8RowStride + g * 8);
      const uint32_t parts[2] = {codes.x, codes.y};
      if (e4m3fn) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const uint16_t two = static_cast<uint16_t>(parts[i / 2] >> (16 * (i % 2)));
          w[i] = F16 ? common::e4m3fn_pair_to_f16_pair(two)
                     : common::e4m3fn_pair_to_bf16_pair(two);
        }
      } else {  // the codec (e4m3fnuz has no fast path here)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float lo = quant::fp8_to_f32(static_cast<uint8_t>(parts[i / 2] >> (16 * (i % 2))), a.fp8);
          const float hi = quant::fp8_to_f32(static_cast<uint8_t>(parts[i / 2] >> (16 * (i % 2) + 8)), a.fp8);
          w[i] = F16 ? f16_bits(lo) | (static_cast<uint32_t>(f16_bits(hi)) << 16)
                     : common::pair_of(lo, hi);
        }
      }
    } else {
      const uint32_t codes = *reinterpret_cast<const uint32_t*>(stage + r * kMxfp4RowStride + g * 4);
      const uint8_t scale = stage[kTileKeys * kMxfp4RowStride + r * problem::kMxfp4RowScales +
                                  g * 8 / problem::kMxfp4Block];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        w[i] = common::mxfp4_pair_to_bf16_pair((codes >> (8 * i)) & 0xFF, scale);
    }
    *reinterpret_cast<uint4*>(tile + r * kBf16RowStride + g * 8) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// Chunked: the persistent schedule's work-item loop (a compile-time switch, so that the split-K
// kernels do not pay its registers: with it ptxas spills at the 128-register cap of 512 threads).
template <KvFormat Kv, PFormat P, SoftmaxBase Base, bool Chunked>
__global__ void __launch_bounds__(kThreads, 1) fast_attention_kernel(AttentionArgs a) {
  using T = Traits<Kv>;
  constexpr bool kBase2 = Base == SoftmaxBase::two;
  constexpr bool kSplitP = P == PFormat::f16;
  // All-fp8 recipes: f16 operands (Q and P are fp8 values there: the launcher checks Q's format).
  constexpr bool kF16 = f16_operands(Kv, P);
  const auto product = [](mma::TileC& d, const mma::TileA16& x, const mma::TileB16& y) {
    if constexpr (kF16) mma::mma_f16(d, x, y);
    else mma::mma_bf16(d, x, y);
  };
  extern __shared__ uint4 shared_words[];  // uint4: the 16-byte alignment the plan assumes
  const Smem<Kv> sh(reinterpret_cast<uint8_t*>(shared_words));
  common::wait_for_previous_kernel();  // gpu/common/grid_dependency.h (no early let_next_kernel_start: its comment)

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / kWarpSize;
  const int dim_group = warp % kDimGroups;
  const int key_group = warp / kDimGroups;
  const int head = tid / kThreadsPerHead;  // softmax role
  const int sub = tid % kThreadsPerHead;

  float score_scale = a.score_scale;  // · Q scale · KV scale, one rounding each (in this order)
  if (a.q_scale != nullptr) score_scale *= *a.q_scale;
  if (a.kv_scaled) score_scale *= a.kv_scale;

  // Work items: (request, split). A uniform plan has one per block; a chunked plan (persistent
  // schedule) has item_start[B] of them, each block taking the next one from item_counter when
  // it is done with its last (the outputs do not depend on which block takes which item).
  constexpr bool chunked = Chunked;
  const bool single_pass = !chunked && a.num_splits == 0;
  const int64_t items = chunked ? a.item_start[a.num_requests] : gridDim.x;
  // Thread 0 takes an item; every thread reads it after the barrier and before thread 0 takes the
  // next (the item's own barriers come between).
  __shared__ int32_t taken;
  const auto next_item = [&]() -> int64_t {
    if (tid == 0) taken = atomicAdd(a.item_counter, 1);
    block_sync();
    return taken;
  };
  for (int64_t item = chunked ? next_item() : blockIdx.x; item < items;
       item = chunked ? next_item() : items) {
    int64_t b = 0;
    int splits = 0, split = 0;
    if (chunked) {  // the request whose items contain `item`
      b = common::owner_of(a.item_start, a.num_requests, item);
      splits = a.item_start[b + 1] - a.item_start[b];
      split = static_cast<int>(item - a.item_start[b]);
    } else {
      splits = a.num_splits > 0 ? a.num_splits : 1;
      b = item / splits;
      split = static_cast<int>(item % splits);
    }
    const int64_t row0 = a.kv_indptr[b];
    const int64_t len = a.kv_indptr[b + 1] - row0;
    const int64_t q_len = a.qo_indptr[b + 1] - a.qo_indptr[b];
    // Partial row of (token i, split): part_base + i·S_b + split (uniform: (token·S + split)).
    const int64_t part_base = chunked ? a.part_start[b] : a.qo_indptr[b] * static_cast<int64_t>(splits);
    const int64_t per_split = single_pass ? len : (len + splits - 1) / splits;
    const int64_t first = split * per_split < len ? split * per_split : len;
    const int64_t end_of_split = first + per_split < len ? first + per_split : len;

    for (int64_t i = 0; i < q_len; ++i) {
      const int64_t token = a.qo_indptr[b] + i;
      const int64_t visible_raw = MLACHECK_MUTANT(a, reversed_causal_bound)  // gpu/mutants.h
                                      ? len - i
                                      : len - q_len + i + 1;  // causal rule (problem/batch.h)
      const int64_t visible = visible_raw > 0 ? visible_raw : 0;
      const int64_t end = end_of_split < visible ? end_of_split : visible;
      const int64_t split_keys = end > first ? end - first : 0;
      const int tiles = static_cast<int>(MLACHECK_MUTANT(a, dropped_partial_tile)  // gpu/mutants.h
                                             ? split_keys / kTileKeys
                                             : (split_keys + kTileKeys - 1) / kTileKeys);
      const auto keys_in = [&](int t) {
        const int64_t left = end - (first + static_cast<int64_t>(t) * kTileKeys);
        return static_cast<int>(left < kTileKeys ? left : kTileKeys);
      };

      // Start the pipeline before Q is staged: the copies do not touch Q's region.
      [[maybe_unused]] ScalePrefetch scales;
#pragma unroll 1
      for (int t = 0; t < T::kStages - 1; ++t) {
        if (t < tiles) {
          issue_tile<Kv>(a, b, row0, first + static_cast<int64_t>(t) * kTileKeys, keys_in(t), sh.stage(t));
          if constexpr (Kv == KvFormat::mxfp4) {
            load_scales(a, b, first + static_cast<int64_t>(t) * kTileKeys, keys_in(t), scales);
            store_scales(scales, sh.stage(t));
          }
        }
        mma::async_commit();
      }

      for (int idx = tid; idx < kNumHeads * (kQkDim / 2); idx += kThreads) {
        const int h = idx / (kQkDim / 2);
        const int j = idx - h * (kQkDim / 2);
        const uint32_t pair = MLACHECK_MUTANT(a, skipped_rope_dims) && j >= kVDim / 2  // gpu/mutants.h
                                  ? 0u
                                  : common::q_pair(a, token * kNumHeads + h, j);
        reinterpret_cast<uint32_t*>(sh.q + h * kBf16RowStride)[j] =
            kF16 ? f16_bits(common::lo_bf16(pair)) |
                       (static_cast<uint32_t>(f16_bits(common::hi_bf16(pair))) << 16)
                 : pair;
      }
      block_sync();
      mma::TileA16 q_ops[kQkStepsPerWarp];
#pragma unroll
      for (int ks = 0; ks < kQkStepsPerWarp; ++ks)
        mma::load_a16(q_ops[ks], sh.q + (dim_group * kQkStepsPerWarp + ks) * mma::kK16,
                      kBf16RowStride);

      float m_run = kNegInf, l_run = 0.0f;  // the head's running max and row sum (softmax role)
      mma::TileC acc[kVTiles];

      for (int t = 0; t < tiles; ++t) {
        // Tile t has landed once at most kStages - 2 groups are pending (kStages - 1 in the
        // prologue, one per earlier tile). The barrier after the wait also ends tile t - 1: every
        // warp is past its P·V, so its stage, the scores, P and alpha can be written again (one
        // barrier per tile fewer than a barrier at the end of the loop).
        static_assert(T::kStages >= 2);
        if (MLACHECK_MUTANT(a, short_copy_wait)) mma::async_wait<T::kStages - 1>();  // gpu/mutants.h
        else mma::async_wait<T::kStages - 2>();
        block_sync();
        const int ahead = t + T::kStages - 1;  // refills the stage tile t - 1 used
        const bool refill = ahead < tiles;
        if (refill) {
          issue_tile<Kv>(a, b, row0, first + static_cast<int64_t>(ahead) * kTileKeys, keys_in(ahead),
                         sh.stage(ahead % T::kStages));
          if constexpr (Kv == KvFormat::mxfp4)
            load_scales(a, b, first + static_cast<int64_t>(ahead) * kTileKeys, keys_in(ahead), scales);
        }
        mma::async_commit();
        const int stage = t % T::kStages;
        if constexpr (T::kDecodes) {
          decode_tile<Kv, kF16>(a, sh.stage(stage), sh.tile);
          block_sync();
        }
        const uint16_t* kv = sh.kv_tile(stage);
        const int n = keys_in(t);

        // 1. Partial scores of this warp's dims.
        {
          mma::TileC s[kKeyTiles];
#pragma unroll
          for (int ks = 0; ks < kQkStepsPerWarp; ++ks) {
            const int d0 = (dim_group * kQkStepsPerWarp + ks) * mma::kK16;
#pragma unroll
            for (int nt = 0; nt < kKeyTiles; ++nt) {
              mma::TileB16 k_op;
              mma::load_b16(k_op, kv + (key_group * kKeysPerWarp + nt * mma::kN) * kBf16RowStride + d0,
                            kBf16RowStride);
              product(s[nt], q_ops[ks], k_op);
            }
          }
          float* part = sh.s_part + dim_group * kNumHeads * kTileKeys + key_group * kKeysPerWarp;
#pragma unroll
          for (int nt = 0; nt < kKeyTiles; ++nt)
#pragma unroll
            for (int l = 0; l < mma::TileC::ne; ++l)
              part[mma::TileC::get_i(l) * kTileKeys + nt * mma::kN + mma::TileC::get_j(l)] = s[nt].x[l];
        }
        block_sync();

        // 2. Softmax step: head `head`, keys sub * kKeysPerThread + e.
        {
          float s[kKeysPerThread];
          float m_tile = kNegInf;
#pragma unroll
          for (int e = 0; e < kKeysPerThread; ++e) {
            const int key = sub * kKeysPerThread + e;
            float dot = 0.0f;
#pragma unroll
            for (int g = 0; g < kDimGroups; ++g) dot += sh.s_part[(g * kNumHeads + head) * kTileKeys + key];
            s[e] = key < n ? dot * score_scale : kNegInf;
            m_tile = max_of(m_tile, s[e]);
          }
#pragma unroll
          for (int mask = kThreadsPerHead / 2; mask >= 1; mask /= 2)
            m_tile = max_of(m_tile, shfl_xor<kThreadsPerHead>(m_tile, mask));
          const float m_new = max_of(m_run, m_tile);
          const float alpha = common::vendor_exp<kBase2>(m_run - m_new);  // 0 on the first tile
          float sum = 0.0f;
#pragma unroll
          for (int e = 0; e < kKeysPerThread; ++e) {
            const float p = common::vendor_exp<kBase2>(s[e] - m_new);  // masked: b^-inf = 0
            sum += p;
            const int at = head * kPStride + sub * kKeysPerThread + e;
            if constexpr (kSplitP) {
              f16_parts(p, sh.p_hi[at], sh.p_lo[at]);
            } else if constexpr (kF16) {
              sh.p_hi[at] = f16_bits(common::round_to_p<P>(p, a.fp8));
            } else {
              sh.p_hi[at] = quant::f32_to_bf16(common::round_to_p<P>(p, a.fp8));
            }
          }
          sum = group_sum<kThreadsPerHead>(sum);
          l_run = l_run * alpha + sum;
          m_run = m_new;
          if (sub == 0) sh.alpha[head] = alpha;
        }
        block_sync();

        // 3. acc = acc·α + P·V over this warp's value dims.
        float alpha_of[mma::TileC::ne];  // the rescale of each accumulator element's head
#pragma unroll
        for (int l = 0; l < mma::TileC::ne; ++l) alpha_of[l] = sh.alpha[mma::TileC::get_i(l)];
        if (!MLACHECK_MUTANT(a, unrescaled_accumulator)) {  // gpu/mutants.h
#pragma unroll
          for (int vt = 0; vt < kVTiles; ++vt)
#pragma unroll
            for (int l = 0; l < mma::TileC::ne; ++l) acc[vt].x[l] *= alpha_of[l];
        }
#pragma unroll
        for (int ks = 0; ks < kPvSteps; ++ks) {
          mma::TileA16 p_hi, p_lo;
          mma::load_a16(p_hi, sh.p_hi + ks * mma::kK16, kPStride);
          if constexpr (kSplitP) mma::load_a16(p_lo, sh.p_lo + ks * mma::kK16, kPStride);
#pragma unroll
          for (int vt = 0; vt < kVTiles; ++vt) {
            mma::TileB16 v_op;
            mma::load_b16_trans(v_op,
                                kv + ks * mma::kK16 * kBf16RowStride + warp * kVDimsPerWarp + vt * mma::kN,
                                kBf16RowStride);
            if constexpr (kSplitP) {
#pragma unroll
              for (int r = 0; r < 2; ++r) v_op.x[r] = round_pair_to_f16(v_op.x[r]);
            }
            product(acc[vt], p_hi, v_op);
            if constexpr (kSplitP) mma::mma_bf16(acc[vt], p_lo, v_op);
          }
        }
        if constexpr (Kv == KvFormat::mxfp4)
          if (refill) store_scales(scales, sh.stage(ahead % T::kStages));
      }
      mma::async_wait<0>();  // nothing in flight into a stage the next token reuses

      // The split's output: o = fl32(fl32(acc / l) · kv scale), lse = fl32(m + log_b l); a query
      // with no visible key in the split writes o = 0, lse = -inf.
      const bool empty = tiles == 0;
      if (sub == 0) {
        sh.l[head] = l_run;
        sh.m[head] = m_run;
      }
      block_sync();
#pragma unroll
      for (int vt = 0; vt < kVTiles; ++vt)
#pragma unroll
        for (int l = 0; l < mma::TileC::ne; ++l) {
          const int h = mma::TileC::get_i(l);
          const int d = warp * kVDimsPerWarp + vt * mma::kN + mma::TileC::get_j(l);
          float o = empty ? 0.0f : acc[vt].x[l] / sh.l[h];
          if (!empty && a.kv_scaled) o = o * a.kv_scale;
          const int64_t row = token * kNumHeads + h;
          if (single_pass) {
            a.out[row * kVDim + d] = quant::f32_to_bf16(o);
          } else {
            const bool bf16_partial = a.partial == problem::PartialFormat::bf16;
            a.part_o[((part_base + i * splits + split) * kNumHeads + h) * kVDim + d] =
                bf16_partial ? common::round_to_bf16(o) : o;
          }
        }
      if (tid < kNumHeads) {
        const float lse = empty ? kNegInf : sh.m[tid] + common::log_base(kBase2, sh.l[tid]);
        if (single_pass) {
          if (a.lse != nullptr) a.lse[token * kNumHeads + tid] = common::natural_lse(kBase2, lse);
        } else {
          a.part_lse[(part_base + i * splits + split) * kNumHeads + tid] = lse;
        }
      }
      block_sync();  // l, m and the stages are reused by the next query token
    }
  }  // work items
}

template <std::size_t I, bool Chunked>
void launch_kernel(const AttentionArgs& args, int64_t blocks, hipStream_t stream, common::KernelStart start) {
  constexpr common::Instance in = kInstances[I];
  static_assert(in.p != PFormat::f32, "the fast kernel's P·V operands are 16-bit");
  {
    constexpr auto kernel = fast_attention_kernel<in.kv, in.p, in.base, Chunked>;
    constexpr std::size_t bytes = Traits<in.kv>::kBytes;
    // Above 48 KB a kernel must opt in; once per instance (a runtime call, not a stream operation,
    // so it is also legal while a graph is being captured).
    static const bool opted_in = [] {
      MLACHECK_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                             hipFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
      return true;
    }();
    static_cast<void>(opted_in);
    common::launch_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), bytes, stream, start, args);
  }
}

template <std::size_t I>
void launch_instance(const AttentionArgs& args, int64_t blocks, hipStream_t stream, common::KernelStart start) {
  if (args.item_start != nullptr) launch_kernel<I, true>(args, blocks, stream, start);
  else launch_kernel<I, false>(args, blocks, stream, start);
}

template <std::size_t... I>
void dispatch(std::size_t instance, const AttentionArgs& args, int64_t blocks, hipStream_t stream,
              common::KernelStart start, std::index_sequence<I...>) {
  ((instance == I ? launch_instance<I>(args, blocks, stream, start) : void()), ...);
}

}  // namespace

bool launch_attention(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                      StreamHandle stream, common::KernelStart start) {
  if (blocks == 0) return false;
  dispatch(instance, args, blocks, static_cast<hipStream_t>(stream), start,
           std::make_index_sequence<kInstances.size()>());
  return false;
}

}  // namespace mlacheck::gpu::fast
