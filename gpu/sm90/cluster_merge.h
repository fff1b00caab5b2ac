#pragma once
// The split-K merge inside a thread-block cluster, for the Hopper family's small batches (issue 10:
// "split-K with the merge fused"): the S blocks of one query token's splits form one cluster, each
// holding its split's partial in its own shared memory (ClusterPartial), and they merge it there,
// with no partial written to global memory and no second kernel. After the cluster's barrier,
// block r merges the 16-byte chunks c = r, r + S, r + 2S, ... of the 16 heads x 128 chunks of the
// token's output, reading the S partials through distributed shared memory with the merge's float
// operations in split order (gpu/common/merge_math.h: the merge kernel's bits); rank 0 writes the
// LSE. A second barrier keeps every block's partial alive until the others have read it.
// S <= kMaxClusterSplits: 8 blocks is the cluster size every sm_90 GPU runs (larger ones need a
// non-portable opt-in and may not fit beside one block per SM). sm_90 device code.
#include <cstdint>

#include "gpu/common/device_common.h"
#include "gpu/common/merge_math.h"
#include "gpu/sm90/cluster.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::sm90 {

inline constexpr int kMaxClusterSplits = 8;

// One split's partial as its block leaves it for the merge: o normalized (fl32(acc / l), after the
// recipe's partial format), lse in the softmax's own base (-inf for a split with no visible key).
struct ClusterPartial {
  float o[problem::kNumHeads * problem::kVDim];
  float lse[problem::kNumHeads];
};
static_assert(sizeof(ClusterPartial) % 16 == 0);

// Shared scratch of the merge in each block: the weights and their sum per head.
struct ClusterMergeScratch {
  float weight[problem::kNumHeads][kMaxClusterSplits];
  float total[problem::kNumHeads];
  float big[problem::kNumHeads];
};

// The merge itself, once every block's partial is written and visible to this block: called by
// threads 0 .. threads - 1 of each of the `splits` blocks of the cluster (a block of rank s holds
// split s); `local_sync` is a barrier of exactly those threads of this block. out: the token's
// [16, 512] bf16 rows; lse: its [16] (natural log), or nullptr. The partials must stay until every
// block is through (the caller's barrier after it).
template <class LocalSync>
__device__ inline void cluster_merge_partials(const ClusterPartial& mine, ClusterMergeScratch& scratch,
                                              int splits, bool base2, uint16_t* out, float* lse,
                                              int threads, LocalSync local_sync) {
  using problem::kNumHeads;
  using problem::kVDim;
  namespace merge = common::merge;
  constexpr int kChunksPerHead = kVDim / 4;
  const int tid = static_cast<int>(threadIdx.x);
  const auto rank = static_cast<int>(cluster_rank());

  if (tid < kNumHeads) {  // one thread per head: the maximum, the weights and W in split order
    const int h = tid;
    // Every peer's LSE loaded before any is used: one remote latency, not one per split.
    float lse_of[kMaxClusterSplits];
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < splits) lse_of[s] = load_cluster_f32(cluster_address(&mine.lse[h], static_cast<uint32_t>(s)));
    float big = merge::kNegInf;
    for (int s = 0; s < splits; ++s) big = merge::max_lse(big, lse_of[s]);
    float total = 0.0f;
    for (int s = 0; s < splits; ++s) {
      scratch.weight[h][s] = merge::weight(base2, lse_of[s], big);
      total = total + scratch.weight[h][s];
    }
    scratch.total[h] = total;
    scratch.big[h] = big;
    if (rank == 0 && lse != nullptr) lse[h] = merge::merged_lse(base2, big, total);
  }
  local_sync();

  for (int c = rank + splits * tid; c < kNumHeads * kChunksPerHead; c += splits * threads) {
    const int h = c / kChunksPerHead;
    const int d = 4 * (c % kChunksPerHead);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (!merge::empty_row(scratch.big[h])) {
      // Every split's chunk loaded before the sums (as the LSEs above), then added in split order.
      float4 part[kMaxClusterSplits];
#pragma unroll
      for (int s = 0; s < kMaxClusterSplits; ++s)
        if (s < splits) part[s] = load_cluster_f4(cluster_address(&mine.o[h * kVDim + d], static_cast<uint32_t>(s)));
#pragma unroll
      for (int s = 0; s < kMaxClusterSplits; ++s) {
        if (s >= splits) break;
        const float4 v = part[s];
        const float w = scratch.weight[h][s];
        acc[0] = merge::accumulate(acc[0], w, v.x);
        acc[1] = merge::accumulate(acc[1], w, v.y);
        acc[2] = merge::accumulate(acc[2], w, v.z);
        acc[3] = merge::accumulate(acc[3], w, v.w);
      }
      for (float& x : acc) x = x / scratch.total[h];
    }
    auto* words = reinterpret_cast<uint32_t*>(out + h * kVDim + d);
    words[0] = common::pack_bf16(quant::f32_to_bf16(acc[0]), quant::f32_to_bf16(acc[1]));
    words[1] = common::pack_bf16(quant::f32_to_bf16(acc[2]), quant::f32_to_bf16(acc[3]));
  }
}

// Called by every thread (`threads` of them) of each of the `splits` blocks of the cluster, after
// each wrote its `mine`: the cluster's barriers around cluster_merge_partials.
__device__ inline void cluster_merge(const ClusterPartial& mine, ClusterMergeScratch& scratch,
                                     int splits, bool base2, uint16_t* out, float* lse,
                                     int threads) {
  cluster_sync();  // every block's partial written
  cluster_merge_partials(mine, scratch, splits, base2, out, lse, threads, [] { common::block_sync(); });
  cluster_sync();  // no block leaves (or rewrites its partial) while another may still read it
}

}  // namespace mlacheck::gpu::sm90
