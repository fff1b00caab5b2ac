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
#include "gpu/sm90/cluster.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::sm90 {

inline constexpr int kMaxClusterSplits = 8;

// Shared scratch of the merge in each block: the splits' LSEs, the weights and their sum per head.
struct ClusterMergeScratch {
  float lse[problem::kNumHeads][kMaxClusterSplits];
  float weight[problem::kNumHeads][kMaxClusterSplits];
  float total[problem::kNumHeads];
  float big[problem::kNumHeads];
};

// The merge of one token by the block of rank `rank` of its `splits` blocks, once every split's
// row is written and visible to this block: called by threads 0 .. threads - 1 of the block;
// `local_sync` is a barrier of exactly those threads. part_o: the token's rows [splits][16][512]
// (o normalized: fl32(acc / l), after the recipe's partial format); part_lse: [splits][16] (the
// softmax's own base, -inf for a split with no visible key). out: the token's [16, 512] bf16 rows;
// lse: its [16] (natural log), or nullptr. The rows are read at L2 (ld.global.cg): they were
// written by other SMs during this kernel.
template <class LocalSync>
__device__ inline void cluster_merge_rows(const float* part_o, const float* part_lse, int splits, int rank,
                                          bool base2, uint16_t* out, float* lse, ClusterMergeScratch& scratch,
                                          int threads, LocalSync local_sync) {
  using problem::kNumHeads;
  using problem::kVDim;
  namespace merge = common::merge;
  constexpr int kChunksPerHead = kVDim / 4;
  const int tid = static_cast<int>(threadIdx.x);

  // The weights: each (head, split) LSE and weight by a thread of its own (one thread per head had
  // them in a chain), the maximum and W = Σ w_s by one thread per head in split order (the merge
  // kernel's operations and order), each from its values loaded first.
  constexpr int kSlots = kNumHeads * kMaxClusterSplits;
  for (int slot = tid; slot < kSlots; slot += threads) {
    const int h = slot / kMaxClusterSplits, s = slot % kMaxClusterSplits;
    if (s < splits) scratch.lse[h][s] = __ldcg(part_lse + s * kNumHeads + h);
  }
  local_sync();
  if (tid < kNumHeads) {
    float v[kMaxClusterSplits];
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) v[s] = s < splits ? scratch.lse[tid][s] : merge::kNegInf;
    float big = merge::kNegInf;
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < splits) big = merge::max_lse(big, v[s]);
    scratch.big[tid] = big;
  }
  local_sync();
  for (int slot = tid; slot < kSlots; slot += threads) {
    const int h = slot / kMaxClusterSplits, s = slot % kMaxClusterSplits;
    if (s < splits) scratch.weight[h][s] = merge::weight(base2, scratch.lse[h][s], scratch.big[h]);
  }
  local_sync();
  if (tid < kNumHeads) {
    const int h = tid;
    float v[kMaxClusterSplits];
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s) v[s] = s < splits ? scratch.weight[h][s] : 0.0f;
    float total = 0.0f;
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < splits) total = total + v[s];
    scratch.total[h] = total;
    if (rank == 0 && lse != nullptr) lse[h] = merge::merged_lse(base2, scratch.big[h], total);
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
      for (int first = 0; first < splits; first += kMaxClusterSplits) {
        float4 part[kMaxClusterSplits];
#pragma unroll
        for (int k = 0; k < kMaxClusterSplits; ++k)
          if (first + k < splits) part[k] = __ldcg(row + (first + k) * split_stride / 4);
#pragma unroll
        for (int k = 0; k < kMaxClusterSplits; ++k) {
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
