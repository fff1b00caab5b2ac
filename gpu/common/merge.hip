// The split-K LSE merge (ref/decode_emulated.h step 5) as a kernel of its own, one block per (query
// row, head); its float operations are gpu/common/merge_math.h's, its weights and merged LSE as
// MergeArgs::weights asks (gpu/common/merge_weights.h).
// The partials are 16-byte aligned (workspace regions are 256-byte aligned, rows 2 KB).
#include <cstdint>
#include <limits>

#include "gpu/platform.h"
#include "gpu/common/config.h"
#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
#include "gpu/common/kernels.h"
#include "gpu/common/merge_math.h"
#include "gpu/common/merge_weights.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::common {
namespace {

using problem::kNumHeads;
using problem::kVDim;

// One block per (query row, head): thread t merges dims 4t .. 4t+3. Many blocks (T x 16) with
// their loads in flight at once, because each output element reads one partial per split; with a
// block per query row a small batch (4 rows x 32 splits) is a handful of blocks waiting on serial
// loads.
constexpr int kDimsPerThread = 4;
static_assert(kMergeThreads * kDimsPerThread == kVDim);
// Partial rows a thread loads at its start (a register each per float), the first kPrefetch of a
// token's splits: two instances, picked by the plan's bound on a request's splits
// (SplitPlan::most_splits). 8 covers the split-K plans' usual 2 to 8 splits; 16 (96 registers
// against 64) took 0.4-1.1 µs off the ragged_bs32_kv4096 row, whose balanced plan cuts its longest
// request into 13-14 pieces, but made split-K bs64_kv1024 1.5-1.7 µs slower in every decoded recipe
// (1024 blocks of 2 splits: fewer blocks an SM) and gained nothing at 4 x 1024's 16 splits (H100,
// device call 10 of 2026-12-06's eighteenth session, branch prefetch16).
constexpr int kPrefetchFew = 8;
constexpr int kPrefetchMany = 16;
// The splits' LSEs and weights are the first warp's: split s is lane s % kWarpSize's.
constexpr int kLsePerLane = kMaxSplits / kWarpSize;
static_assert(kLsePerLane * kWarpSize == kMaxSplits && kMergeThreads >= kWarpSize);

template <int kPrefetchSplits, MergeWeights kWeights>
__global__ void __launch_bounds__(kMergeThreads) merge_kernel(MergeArgs a) {
  wait_for_previous_kernel();  // gpu/common/grid_dependency.h
  __shared__ float lse_at[kMaxSplits];
  __shared__ float weight[kMaxSplits];
  __shared__ float big_and_total[2];

  const int tid = static_cast<int>(threadIdx.x);
  const int64_t token = blockIdx.x / kNumHeads;
  const int head = static_cast<int>(blockIdx.x % kNumHeads);
  // The token's partial rows: base .. base + splits - 1.
  int splits = a.num_splits;
  int64_t base = token * splits;
  if (a.token_rows != nullptr) {  // work-list plan: the rows the plan kernel wrote for this token
    const TokenRows rows = a.token_rows[token];
    splits = rows.splits;
    base = rows.first;
    if (splits == 1 && a.unsplit_written) return;  // balanced plan: the attention kernel wrote it
  }
  // This thread's dims of the first kPrefetchSplits partial rows, loaded before the weights are
  // known: their latency passes with the LSEs' instead of after it.
  const float* o = a.part_o + (base * kNumHeads + head) * kVDim + kDimsPerThread * tid;
  const int64_t split_stride = static_cast<int64_t>(kNumHeads) * kVDim;
  float4 early[kPrefetchSplits];
#pragma unroll
  for (int s = 0; s < kPrefetchSplits; ++s)
    if (s < splits) early[s] = *reinterpret_cast<const float4*>(o + s * split_stride);
  // The weights by the first warp alone, then one barrier of the block. (With the LSEs, the maximum,
  // the weights and their sum each a pass of the block through shared memory, four barriers and two
  // chains of shared-memory loads by thread 0 lay between the LSEs' arrival and the first product.)
  if (tid < kWarpSize) {
    const int lane = tid;
    // The LSEs all loaded at once (kLsePerLane a lane), kept in shared memory for the weights' loop,
    // which stays rolled: unrolled, it held kLsePerLane copies of the double-precision exp.
    float big = merge::kNegInf;
    {
      float lse_of[kLsePerLane];
#pragma unroll
      for (int k = 0; k < kLsePerLane; ++k) {
        const int s = lane + kWarpSize * k;
        lse_of[k] = s < splits ? a.part_lse[(base + s) * kNumHeads + head] : merge::kNegInf;
      }
      // M: the maximum of the LSEs that are no NaN (merge::max_lse's fold in split order skips a
      // NaN, as fmaxf does, and is -inf where none is left). Taken in another order it can differ
      // from the fold only in the sign of a zero, which no output sees: w = b^(lse - M) and
      // M + log_b W are the same for M = +0 and -0 (tests/gpu/merge_kernel_test.cpp).
#pragma unroll
      for (int k = 0; k < kLsePerLane; ++k) {
        const int s = lane + kWarpSize * k;
        if (s < splits) lse_at[s] = lse_of[k];
        big = fmaxf(big, lse_of[k]);
      }
    }
#pragma unroll
    for (int mask = kWarpSize / 2; mask >= 1; mask /= 2) big = fmaxf(big, shfl_xor<kWarpSize>(big, mask));
    const bool empty = merge::empty_row(big);
    for (int s = lane; s < splits; s += kWarpSize)  // each lane its own LSEs, stored above
      weight[s] = !empty && MLACHECK_MUTANT(a, equal_weight_merge)  // gpu/mutants.h
                      ? (lse_at[s] == merge::kNegInf ? 0.0f : 1.0f)
                      : merge::weight_by<kWeights>(a.base2, lse_at[s], big);
    // W = Σ w_s in split order: one chain of adds, every lane the same, the loads of the weights
    // (broadcasts) independent of it and issued ahead of the adds.
    warp_sync();
    float total = 0.0f;
#pragma unroll 8
    for (int s = 0; s < splits; ++s) total = total + weight[s];
    if (lane == 0) {
      big_and_total[0] = big;
      big_and_total[1] = total;
      if (a.lse != nullptr) {
        float lse = merge::merged_lse_by<kWeights>(a.base2, big, total);
        if (MLACHECK_MUTANT(a, lse_in_base2)) lse *= static_cast<float>(math_detail::kLog2e);  // gpu/mutants.h
        a.lse[token * kNumHeads + head] = lse;
      }
    }
  }
  block_sync();
  const bool empty = merge::empty_row(big_and_total[0]);
  const float total = big_and_total[1];

  float acc[kDimsPerThread] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (!empty) {
    const auto add = [&](const float4& v, float w) {
      acc[0] = merge::accumulate(acc[0], w, v.x);
      acc[1] = merge::accumulate(acc[1], w, v.y);
      acc[2] = merge::accumulate(acc[2], w, v.z);
      acc[3] = merge::accumulate(acc[3], w, v.w);
    };
#pragma unroll
    for (int s = 0; s < kPrefetchSplits; ++s)
      if (s < splits) add(early[s], weight[s]);
#pragma unroll 8
    for (int s = kPrefetchSplits; s < splits; ++s) add(*reinterpret_cast<const float4*>(o + s * split_stride), weight[s]);
#pragma unroll
    for (int e = 0; e < kDimsPerThread; ++e) acc[e] = acc[e] / total;
  }
  uint32_t* out = reinterpret_cast<uint32_t*>(a.out + (token * kNumHeads + head) * kVDim +
                                              kDimsPerThread * tid);
  out[0] = pack_bf16(quant::f32_to_bf16(acc[0]), quant::f32_to_bf16(acc[1]));
  out[1] = pack_bf16(quant::f32_to_bf16(acc[2]), quant::f32_to_bf16(acc[3]));
}

}  // namespace

void launch_merge(const MergeArgs& args, int64_t rows, int most_splits, StreamHandle stream, KernelStart start) {
  if (rows == 0) return;
  const bool many = most_splits > kPrefetchFew;
  const bool vendor = args.weights == MergeWeights::vendor;
  const auto kernel = many ? (vendor ? merge_kernel<kPrefetchMany, MergeWeights::vendor>
                                     : merge_kernel<kPrefetchMany, MergeWeights::emulated>)
                           : (vendor ? merge_kernel<kPrefetchFew, MergeWeights::vendor>
                                     : merge_kernel<kPrefetchFew, MergeWeights::emulated>);
  launch_kernel(kernel, dim3(static_cast<unsigned>(rows * kNumHeads)), dim3(kMergeThreads), 0,
                static_cast<hipStream_t>(stream), start, args);
}

}  // namespace mlacheck::gpu::common
