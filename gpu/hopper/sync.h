#pragma once
// The Hopper attention kernel's barriers between its warpgroups and its asynchronous copies of
// 16 bytes (gpu/hopper/attention.hip).
// Included by gpu/hopper/attention.hip only: its device code, in the anonymous namespace of that one
// translation unit.
#include <cstdint>

#include "gpu/hopper/traits.h"

namespace mlacheck::gpu::hopper {
namespace {

__device__ __forceinline__ void copy_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src));
}
__device__ __forceinline__ void copy_commit_and_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}
// Generic-proxy writes (cp.async, st.shared) made visible to wgmma's asynchronous proxy and ordered
// before the copy engine's later writes to the same bytes; a barrier after it shows every thread's.
__device__ __forceinline__ void fence_to_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Barrier of one warpgroup's 128 threads.
__device__ __forceinline__ void warpgroup_sync(int warpgroup) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + warpgroup), "n"(sm90::kWarpgroupThreads) : "memory");
}
// Barrier of the two consumer warpgroups (the producer warp runs ahead on its own).
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kConsumerBarrier), "n"(kConsumerThreads) : "memory");
}
// Warpgroup w's tile published: w's threads after their writes, the other's before reading them,
// on the barrier 4 + w of both warpgroups. Both wait: each warpgroup meets the other at every
// tile, in tile order (its own tiles as publisher, the other's as reader), so the barrier also
// orders the reader's reads before the publisher's next writes. The two sides reach it at
// different instructions, so it is the non-aligned barrier.sync: with bar.sync
// (barrier.sync.aligned, which promises one instruction for all) synccheck reported divergent
// threads. racecheck reports the statistics (pub) as read before written, in every form tried: a
// false report, which it makes on a race-free reduction of this hand-off too as soon as a
// warpgroup-local barrier (reduce_heads') lies between two hand-offs
// (gpu/sm90/racecheck_handoff_repro.cu; scripts/device-check.sh keeps this kernel out of racecheck
// while that holds; docs/PERF.md, "Device runs 1-8 of the overlap branch" and after).
__device__ __forceinline__ void tile_published(int warpgroup) {
  __syncwarp();  // each warp arrives whole
  asm volatile("barrier.sync %0, %1;\n" ::"r"(kPublishedBarrier + warpgroup), "n"(kConsumerThreads) : "memory");
}

// fp8: the publisher's side of tile_published only arrives (its writes before the barrier are
// visible to the reader after its barrier.sync); the reader waits. Each publish is taken by exactly
// one read of the other warpgroup before the publisher's next one (attention kernel, take_stats).
__device__ __forceinline__ void tile_published_arrive(int warpgroup) {
  __syncwarp();
  asm volatile("barrier.arrive %0, %1;\n" ::"r"(kPublishedBarrier + warpgroup), "n"(kConsumerThreads) : "memory");
}

// The largest of two scores the reference's way (a NaN second operand is skipped).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }

}  // namespace
}  // namespace mlacheck::gpu::hopper
