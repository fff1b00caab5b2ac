// The portable attention kernel: one block per (request, split) serves all 16 heads, so each KV
// row of the split is read once per query (q_seq_len > 1 re-reads the split for each query, from
// L2). It follows ref/decode_emulated.h step by step:
//   - Q and K values are staged in shared memory as bf16 bit pairs: every value Q·Kᵀ and P·V take
//     (bf16, fp8, E2M1·2^e, and V rounded to bf16 / fp16) is exactly a bf16 value, so nothing is
//     rounded by the staging.
//   - Each score is one thread's dot product over d = 0..575 in order, in float32; every product is
//     exact, so an FMA gives the reference's separate multiply and add, bit for bit.
//   - Split boundaries ceil(L / S), softmax steps of softmax_tile keys from the split's start, the
//     max over the step, p = fl32(b^(s - m')), the row sum of the unrounded p in key order, P
//     rounded to the recipe's format, acc = acc·α + Σ_t P_t·V_t in key order (exact products).
//   - A step is read twice: once for its max, once for P·V; its scores are kept in shared memory
//     when it has at most kScoreCacheKeys keys and computed again (same bits) otherwise.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "gpu/common/config.h"
#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
#include "gpu/common/operand_decode.h"
#include "gpu/common/operands.h"
#include "gpu/common/rounding.h"
#include "gpu/platform.h"
#include "gpu/portable/config.h"
#include "gpu/portable/instances.h"
#include "gpu/portable/kernels.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu::portable {

// The shared device helpers and argument structs (gpu/common/).
using namespace common;

namespace {

using problem::KvFormat;
using problem::PFormat;
using problem::SoftmaxBase;
using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;

constexpr int kOutPairsPerThread = kVPairs / kChunkKeys;  // 16 pairs = 32 dims of one head
static_assert(kThreads == kNumHeads * kChunkKeys);
static_assert(kVPairs % kChunkKeys == 0);

// Elements 2j, 2j+1 of cache row `row`, decoded (fp8 without its tensor scale).
template <KvFormat Kv>
__device__ __forceinline__ uint32_t kv_pair(const AttentionArgs& a, int64_t row, int j) {
  if constexpr (Kv == KvFormat::bf16) {
    return reinterpret_cast<const uint32_t*>(a.kv_bf16 + row * kQkDim)[j];
  } else if constexpr (Kv == KvFormat::fp8) {
    const uint8_t* c = a.kv_fp8 + row * kQkDim + 2 * j;
    return common::fp8_pair_to_bf16_pair(c[0], c[1], a.fp8);
  } else {
    return common::mxfp4_pair_to_bf16_pair(a.kv_mxfp4[row * problem::kMxfp4RowBytes + j],
                                           a.kv_mxfp4_scale[row * problem::kMxfp4RowScales + j / 16]);
  }
}

// V in the P·V operand type: rounded to bf16 / fp16 when P is one of those (the reference's
// KvDecoder::v_row); the result is again a bf16 value.
template <PFormat P>
__device__ __forceinline__ uint32_t v_pair(uint32_t w) {
  if constexpr (P == PFormat::bf16 || P == PFormat::f16) {
    return pair_of(round_to_p<P>(lo_bf16(w), quant::Fp8Format::e4m3fn),
                   round_to_p<P>(hi_bf16(w), quant::Fp8Format::e4m3fn));
  } else {
    return w;
  }
}

// acc + p·v: one FMA where the product is exact (every P format but f32, whose products with V
// are not), else the reference's multiply then add.
template <PFormat P>
__device__ __forceinline__ float add_pv(float acc, float p, float v) {
  if constexpr (P == PFormat::f32) {
    const float prod = p * v;
    return acc + prod;
  } else {
    return fma_f(p, v, acc);
  }
}

struct Shared {
  uint32_t q[kNumHeads][kRowStride];         // Q of the current query, bf16 pairs
  uint32_t k[kChunkKeys][kRowStride];        // the chunk's K rows (then V, rounded), bf16 pairs
  float s_cache[kScoreCacheKeys][kNumHeads];  // scores of a short step
  float s[kChunkKeys][kNumHeads];            // the chunk's scores (long steps)
  float p_raw[kChunkKeys][kNumHeads];        // p = b^(s - m'), unrounded (row sums)
  float p[kChunkKeys][kNumHeads];            // p rounded to the P format (P·V)
  float m[kNumHeads], l[kNumHeads];          // running max and row sum of the split so far
  float m_new[kNumHeads], alpha[kNumHeads];  // the step's max and the rescale b^(m - m')
};

// Stages rows t_first .. t_first + count - 1 of request b (the first `pairs` pairs of each).
template <KvFormat Kv>
__device__ void load_rows(Shared& sh, const AttentionArgs& a, int64_t b, int64_t t_first,
                          int count, int pairs) {
  for (int idx = static_cast<int>(threadIdx.x); idx < count * pairs; idx += kThreads) {
    const int r = idx / pairs;
    const int j = idx - r * pairs;
    sh.k[r][j] = kv_pair<Kv>(a, kv_row(a, b, t_first + r), j);
  }
}

// Unscaled-then-scaled score of (head h, chunk key t): fl32(Σ_d q[d]·k[d] · score_scale), d in
// order.
__device__ __forceinline__ float score(const Shared& sh, int h, int t, float score_scale) {
  const uint32_t* q = sh.q[h];
  const uint32_t* k = sh.k[t];
  float acc = 0.0f;
  for (int j = 0; j < kRowPairs; ++j) {
    const uint32_t qw = q[j];
    const uint32_t kw = k[j];
    acc = fma_f(lo_bf16(qw), lo_bf16(kw), acc);
    acc = fma_f(hi_bf16(qw), hi_bf16(kw), acc);
  }
  return acc * score_scale;
}

// At least one block per multiprocessor is all it asks: on NVIDIA that lets ptxas keep everything in
// registers (with the default cap of 128 it spilled a few words to local memory).
template <KvFormat Kv, PFormat P, SoftmaxBase Base>
__global__ void __launch_bounds__(kThreads, 1) attention_kernel(AttentionArgs a) {
  constexpr bool kBase2 = Base == SoftmaxBase::two;
  constexpr float kNegInf = -__builtin_huge_valf();
  __shared__ Shared sh;
  common::wait_for_previous_kernel();  // gpu/common/grid_dependency.h (no early let_next_kernel_start: its comment)

  const int tid = static_cast<int>(threadIdx.x);
  // Score and P phases: thread = (head, chunk key). P·V phase: thread = (head, 16 output pairs).
  const int head = tid / kChunkKeys;
  const int lane = tid % kChunkKeys;
  const bool head_thread = tid < kNumHeads;  // thread `tid` keeps head tid's serial sums

  const int splits = a.num_splits > 0 ? a.num_splits : 1;
  const int64_t b = blockIdx.x / splits;
  const int split = static_cast<int>(blockIdx.x % splits);
  const int64_t len = a.kv_indptr[b + 1] - a.kv_indptr[b];
  const int64_t q_len = a.qo_indptr[b + 1] - a.qo_indptr[b];
  // The split's keys [first, end_of_split): ceil(L / S) per split, trailing ones may be empty.
  const int64_t per_split = a.num_splits > 0 ? (len + a.num_splits - 1) / a.num_splits : len;
  const int64_t first = split * per_split < len ? split * per_split : len;
  const int64_t end_of_split = first + per_split < len ? first + per_split : len;
  const int64_t step = a.softmax_tile > 0 ? a.softmax_tile : end_of_split - first;

  float score_scale = a.score_scale;  // · Q scale · KV scale, one rounding each (in this order)
  if (a.q_scale != nullptr) score_scale *= *a.q_scale;
  if (a.kv_scaled) score_scale *= a.kv_scale;

  for (int64_t i = 0; i < q_len; ++i) {
    const int64_t token = a.qo_indptr[b] + i;
    const int64_t visible_raw = len - q_len + i + 1;  // causal rule (problem/batch.h)
    const int64_t visible = visible_raw > 0 ? visible_raw : 0;
    const int64_t end = end_of_split < visible ? end_of_split : visible;

    for (int idx = tid; idx < kNumHeads * kRowPairs; idx += kThreads) {
      const int h = idx / kRowPairs;
      const int j = idx - h * kRowPairs;
      sh.q[h][j] = q_pair(a, token * kNumHeads + h, j);
    }
    if (head_thread) {
      sh.m[tid] = kNegInf;
      sh.l[tid] = 0.0f;
    }
    float acc[2 * kOutPairsPerThread];
#pragma unroll
    for (int e = 0; e < 2 * kOutPairsPerThread; ++e) acc[e] = 0.0f;
    block_sync();

    for (int64_t t0 = first; t0 < end; t0 += step) {
      const int n = static_cast<int>((t0 + step < end ? t0 + step : end) - t0);
      const bool cached = n <= kScoreCacheKeys;

      // Pass 1: the step's max per head (std::max order: a NaN score is skipped).
      float m_new = head_thread ? sh.m[tid] : 0.0f;
      for (int c0 = 0; c0 < n; c0 += kChunkKeys) {
        const int nc = n - c0 < kChunkKeys ? n - c0 : kChunkKeys;
        load_rows<Kv>(sh, a, b, t0 + c0, nc, kRowPairs);
        block_sync();
        if (lane < nc) {
          const float s = score(sh, head, lane, score_scale);
          sh.s[lane][head] = s;
          if (cached) sh.s_cache[c0 + lane][head] = s;
        }
        block_sync();
        if (head_thread)
          for (int t = 0; t < nc; ++t) m_new = m_new < sh.s[t][tid] ? sh.s[t][tid] : m_new;
      }
      if (head_thread) {
        sh.m_new[tid] = m_new;
        sh.alpha[tid] = exp_base(kBase2, sh.m[tid] - m_new);  // 0 on the first step (m = -inf)
      }
      block_sync();
      const float alpha = sh.alpha[head];
#pragma unroll
      for (int e = 0; e < 2 * kOutPairsPerThread; ++e) acc[e] = acc[e] * alpha;

      // Pass 2: p, the row sum, P rounded, acc += P·V.
      float sum = 0.0f;
      for (int c0 = 0; c0 < n; c0 += kChunkKeys) {
        const int nc = n - c0 < kChunkKeys ? n - c0 : kChunkKeys;
        load_rows<Kv>(sh, a, b, t0 + c0, nc, cached ? kVPairs : kRowPairs);
        block_sync();
        if (!cached) {
          if (lane < nc) sh.s[lane][head] = score(sh, head, lane, score_scale);
          block_sync();
        }
        if (lane < nc) {
          const float s = cached ? sh.s_cache[c0 + lane][head] : sh.s[lane][head];
          const float p = exp_base(kBase2, s - sh.m_new[head]);
          sh.p_raw[lane][head] = p;
          sh.p[lane][head] = round_to_p<P>(p, a.fp8);
        }
        for (int idx = tid; idx < nc * kVPairs; idx += kThreads) {
          const int r = idx / kVPairs;
          const int j = idx - r * kVPairs;
          sh.k[r][j] = v_pair<P>(sh.k[r][j]);
        }
        block_sync();
        if (head_thread)
          for (int t = 0; t < nc; ++t) sum = sum + sh.p_raw[t][tid];
        for (int t = 0; t < nc; ++t) {
          const float p = sh.p[t][head];
          const uint32_t* v = sh.k[t];
#pragma unroll
          for (int jj = 0; jj < kOutPairsPerThread; ++jj) {
            const uint32_t w = v[lane + kChunkKeys * jj];
            acc[2 * jj] = add_pv<P>(acc[2 * jj], p, lo_bf16(w));
            acc[2 * jj + 1] = add_pv<P>(acc[2 * jj + 1], p, hi_bf16(w));
          }
        }
        block_sync();
      }
      if (head_thread) {
        const float scaled = sh.l[tid] * sh.alpha[tid];
        sh.l[tid] = scaled + sum;
        sh.m[tid] = sh.m_new[tid];
      }
      block_sync();
    }

    // The split's output: o = fl32(fl32(acc / l) · kv scale), lse = fl32(m + log_b l); a query
    // with no visible key in the split writes o = 0, lse = -inf.
    const bool empty = end <= first;
    const float l = sh.l[head];
    float o[2 * kOutPairsPerThread];
#pragma unroll
    for (int e = 0; e < 2 * kOutPairsPerThread; ++e) {
      float x = empty ? 0.0f : acc[e] / l;
      if (!empty && a.kv_scaled) x = x * a.kv_scale;
      o[e] = x;
    }
    const int64_t row = token * kNumHeads + head;  // (token, head)
    if (a.num_splits == 0) {
      uint32_t* out = reinterpret_cast<uint32_t*>(a.out + row * kVDim);
#pragma unroll
      for (int jj = 0; jj < kOutPairsPerThread; ++jj)
        out[lane + kChunkKeys * jj] =
            pack_bf16(quant::f32_to_bf16(o[2 * jj]), quant::f32_to_bf16(o[2 * jj + 1]));
    } else {
      float* out = a.part_o + ((token * a.num_splits + split) * kNumHeads + head) * kVDim;
      const bool bf16_partial = a.partial == problem::PartialFormat::bf16;
#pragma unroll
      for (int jj = 0; jj < kOutPairsPerThread; ++jj) {
        const int d = 2 * (lane + kChunkKeys * jj);
        out[d] = bf16_partial ? round_to_bf16(o[2 * jj]) : o[2 * jj];
        out[d + 1] = bf16_partial ? round_to_bf16(o[2 * jj + 1]) : o[2 * jj + 1];
      }
    }
    if (head_thread) {
      const float lse = empty ? kNegInf : sh.m[tid] + log_base(kBase2, sh.l[tid]);
      if (a.num_splits == 0) {
        if (a.lse != nullptr)
          a.lse[token * kNumHeads + tid] = MLACHECK_MUTANT(a, lse_in_base2)  // gpu/mutants.h
                                               ? natural_lse(kBase2, lse) * static_cast<float>(math_detail::kLog2e)
                                               : natural_lse(kBase2, lse);
      } else {
        a.part_lse[(token * a.num_splits + split) * kNumHeads + tid] = lse;
      }
    }
    block_sync();  // m and l are reset by the next query
  }
}

template <std::size_t I>
void launch_instance(const AttentionArgs& args, int64_t blocks, hipStream_t stream, common::KernelStart start) {
  constexpr Instance in = kInstances[I];
  common::launch_kernel(attention_kernel<in.kv, in.p, in.base>, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0,
                        stream, start, args);
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

}  // namespace mlacheck::gpu::portable
