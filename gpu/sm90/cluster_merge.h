#pragma once
// The split-K merge inside a thread-block cluster, for the Hopper family's small batches (issue 10:
// "split-K with the merge fused"): the S blocks of one query token's splits form one cluster; each
// writes its split's partial row (o and lse) to the workspace as for the merge kernel, the blocks
// meet at the cluster's barrier, and block r then merges the 16-byte chunks c = r, r + S, r + 2S,
// ... of the 16 heads x 128 chunks of the token's output, reading the S partial rows from L2 with
// the merge's float operations in split order (gpu/common/merge_math.h: the merge kernel's bits);
// rank 0 writes the LSE. No second kernel, and its launch gap, is left.
// Why through L2 and not each block's shared memory (distributed shared memory, the first
// version): loads from the peers' shared memory cost about 1000 cycles each when every block reads
// every peer at once (a chunk of 8 splits took 8400 cycles, of 16 splits 9700, on the H200: docs/
// PERF.md, device runs 5-7 of 2026-12-03), where the rows in L2 come at L2's bandwidth; and a block's
// partial in its own shared memory had to outlive every peer's reads (a second barrier).
// S <= kMaxClusterSplits = 8, the cluster size every sm_90 GPU runs. Clusters of 16 blocks (the
// non-portable opt-in) were measured and left out: at 4 x 1024, where the split rule picks 16
// splits, the fused kernel took 16.1 µs against 15.6-15.9 with the merge kernel (device runs 7-8 of
// 2026-12-03). sm_90 device code.
#include <cstdint>

#include "gpu/common/device_common.h"
#include "gpu/common/merge_math.h"
#include "gpu/common/merge_weights.h"
#include "gpu/sm90/cluster.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::sm90 {

inline constexpr int kMaxClusterSplits = 8;

// Shared scratch of the merge in each block: the weights, their maximum LSE and their sum per head.
struct ClusterMergeScratch {
  float weight[problem::kNumHeads][kMaxClusterSplits];
  float total[problem::kNumHeads];
  float big[problem::kNumHeads];
};

// The merge of one token by the block of rank `rank` of its `splits` blocks, once every split's
// row is written and visible to this block: called by threads 0 .. threads - 1 of the block
// (threads >= kNumHeads x kMaxClusterSplits, whole warps);
// `local_sync` is a barrier of exactly those threads. part_o: the token's rows [splits][16][512]
// (o normalized: fl32(acc / l), after the recipe's partial format); part_lse: [splits][16] (the
// softmax's own base, -inf for a split with no visible key). out: the token's [16, 512] bf16 rows;
// lse: its [16] (natural log), or nullptr. The rows are read at L2 (ld.global.cg): they were
// written by other SMs during this kernel. InFlight: how many splits' chunks are loaded before they
// are added (fewer registers; the same additions in split order). Weights: how the weights and the
// merged LSE are computed (gpu/common/merge_weights.h), the merge kernel's for the same bits.
template <common::MergeWeights Weights, int InFlight = kMaxClusterSplits, class LocalSync>
__device__ inline void cluster_merge_rows(const float* part_o, const float* part_lse, int splits, int rank,
                                          bool base2, uint16_t* out, float* lse, ClusterMergeScratch& scratch,
                                          int threads, LocalSync local_sync) {
  using problem::kNumHeads;
  using problem::kVDim;
  namespace merge = common::merge;
  constexpr int kChunksPerHead = kVDim / 4;
  const int tid = static_cast<int>(threadIdx.x);

  // The weights: head h's splits by the kMaxClusterSplits lanes tid = h·kMaxClusterSplits + s, one
  // (head, split) LSE and weight a lane, the maximum and W = Σ w_s from the group's lanes by
  // shuffles (W added in split order, the merge kernel's operations), then one barrier. (Each step
  // a pass through shared memory, four barriers, cost about 3400 cycles of a 4 x 1024 call's fused
  // merge: docs/PERF.md, device run 6 of 2026-12-03.)
  static_assert(kNumHeads * kMaxClusterSplits % kWarpSize == 0 && kWarpSize % kMaxClusterSplits == 0,
                "whole warps of whole lane groups");
  if (tid < kNumHeads * kMaxClusterSplits) {
    const int h = tid / kMaxClusterSplits, s = tid % kMaxClusterSplits;
    const float lse_s = s < splits ? __ldcg(part_lse + s * kNumHeads + h) : merge::kNegInf;
    // The maximum of the LSEs that are no NaN, as the merge kernel takes it (gpu/common/merge.hip).
    float big = lse_s;
#pragma unroll
    for (int mask = kMaxClusterSplits / 2; mask >= 1; mask /= 2)
      big = fmaxf(big, shfl_xor<kMaxClusterSplits>(big, mask));
    const float w = s < splits ? merge::weight_by<Weights>(base2, lse_s, big) : 0.0f;
    float total = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxClusterSplits; ++k) {
      const float w_k = __shfl_sync(0xFFFFFFFFu, w, k, kMaxClusterSplits);
      if (k < splits) total = total + w_k;
    }
    scratch.weight[h][s] = w;
    if (s == 0) {
      scratch.big[h] = big;
      scratch.total[h] = total;
      if (rank == 0 && lse != nullptr) lse[h] = merge::merged_lse_by<Weights>(base2, big, total);
    }
  }
  local_sync();

  const int64_t split_stride = static_cast<int64_t>(kNumHeads) * kVDim;
  for (int c = rank + splits * tid; c < kNumHeads * kChunksPerHead; c += splits * threads) {
    const int h = c / kChunksPerHead;
    const int d = 4 * (c % kChunksPerHead);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (!merge::empty_row(scratch.big[h])) {
      // The splits' chunks all loaded before they are used, then added in split order.
      const auto* row = reinterpret_cast<const float4*>(part_o + h * kVDim + d);
      for (int first = 0; first < splits; first += InFlight) {
        float4 part[InFlight];
#pragma unroll
        for (int k = 0; k < InFlight; ++k)
          if (first + k < splits) part[k] = __ldcg(row + (first + k) * split_stride / 4);
#pragma unroll
        for (int k = 0; k < InFlight; ++k) {
          if (first + k >= splits) break;
          const float4 v = part[k];
          const float w = scratch.weight[h][first + k];
          acc[0] = merge::accumulate(acc[0], w, v.x);
          acc[1] = merge::accumulate(acc[1], w, v.y);
          acc[2] = merge::accumulate(acc[2], w, v.z);
          acc[3] = merge::accumulate(acc[3], w, v.w);
        }
      }
      for (float& x : acc) x = x / scratch.total[h];
    }
    auto* words = reinterpret_cast<uint32_t*>(out + h * kVDim + d);
    words[0] = common::pack_bf16(quant::f32_to_bf16(acc[0]), quant::f32_to_bf16(acc[1]));
    words[1] = common::pack_bf16(quant::f32_to_bf16(acc[2]), quant::f32_to_bf16(acc[3]));
  }
}

}  // namespace mlacheck::gpu::sm90
