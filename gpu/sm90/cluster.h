#pragma once
// NVIDIA sm_90's thread-block clusters (PTX ISA "Cluster of CTAs"): the blocks of a cluster run at
// once on one GPC and read each other's shared memory (distributed shared memory) through
// addresses that `mapa` makes from their own. sm_90 device code, like the rest of gpu/sm90/.
#include <cstdint>

#include "gpu/platform.h"

#if !defined(__CUDACC__)
#error "gpu/sm90/cluster.h is NVIDIA device code: include it from the sm_90a sources only"
#endif

namespace mlacheck::gpu::sm90 {

// Every thread of every block of the cluster: writes to shared memory before it (release) are
// visible to reads of any block after it (acquire). All threads of each block reach it together
// (the .aligned form).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The address in the cluster's shared window of `local` (a pointer into this block's shared
// memory) as block `rank` holds it.
__device__ __forceinline__ uint32_t cluster_address(const void* local, uint32_t rank) {
  const auto own = static_cast<uint32_t>(__cvta_generic_to_shared(local));
  uint32_t remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(own), "r"(rank));
  return remote;
}

// Arrivals on the mbarrier `bar` (given by this block's address of it) as blocks 0 .. peers - 1 hold
// it: one release fence at cluster scope, then a relaxed arrival on each, so what this thread wrote,
// and what a barrier ordered before the fence, is visible to the threads of each of those blocks
// once their acquiring wait (cluster_barrier_wait) is through. So blocks hand data over without
// barrier.cluster, which every thread of every block must reach (a warp that left early, like a
// producer warp, could not). Why not a releasing arrival per peer: each is compiled to a GPU-scope
// memory barrier of its own (MEMBAR.ALL.GPU); eight in a row took about 3100 cycles on the H200
// (docs/PERF.md, device run 4 of 2026-12-03).
__device__ __forceinline__ void cluster_barrier_arrive_all(const void* bar, uint32_t peers) {
  asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
  for (uint32_t rank = 0; rank < peers; ++rank)
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_address(bar, rank))
                 : "memory");
}

// Waits for phase `parity` of this block's mbarrier `bar` to complete, acquiring at cluster scope.
__device__ __forceinline__ void cluster_barrier_wait(const void* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred done;\n wait:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait;\n}\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(parity)
      : "memory");
}

}  // namespace mlacheck::gpu::sm90
