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

// This block's rank in its cluster, 0 .. cluster size - 1.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

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

// An arrival on the mbarrier `bar` (given by this block's address of it) as block `rank` holds it,
// releasing at cluster scope: what this thread wrote, and what a barrier ordered before this,
// is visible to the threads of that block once their acquiring wait (cluster_barrier_wait) is
// through. So blocks hand data over without barrier.cluster, which every thread of every block
// must reach (a warp that left early, like a producer warp, could not).
__device__ __forceinline__ void cluster_barrier_arrive(const void* bar, uint32_t rank) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_address(bar, rank))
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

// 16 bytes (four floats) and one float at a cluster shared address (cluster_address).
__device__ __forceinline__ float4 load_cluster_f4(uint32_t address) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(address)
               : "memory");
  return v;
}
__device__ __forceinline__ float load_cluster_f32(uint32_t address) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(address) : "memory");
  return v;
}

}  // namespace mlacheck::gpu::sm90
