#pragma once
// The device side of KernelStart::with_previous (gpu/common/kernel_start.h): CUDA's programmatic
// dependent launch on sm_90 and later, nothing elsewhere (AMD and older NVIDIA launch every kernel
// after_previous: gpu/common/launch_kernel.h).
//
// The rule every kernel of the call keeps: it calls wait_for_previous_kernel before it reads
// anything an earlier kernel of the call wrote, before it writes anything an earlier kernel reads,
// and in every block before the block ends. The last point makes a kernel's end imply its
// predecessor's, so the chain amax -> encode -> work list -> attention -> merge ends in order and
// the call's last kernel ending means the call has ended (the next call's first kernel, launched
// after_previous, and the timing events rely on it). A kernel launched after_previous returns from
// the wait at once.
//
// The tests cannot be relied on to see a broken rule: the hopper kernel planted without its
// consumers' wait (so reading Q's codes and scale beside the encode kernel) passed verify on every
// row tried, 182 of the quick tier and 9 of the largest standard shapes, on an H100: its blocks
// start too late to win the race (docs/PERF.md, "Device runs 2-3 of 2026-12-05's twelfth session").
// Keep it by reading the code: every kernel's waits are at its top.
#include "gpu/platform.h"

#if !defined(__CUDACC__) && !defined(__HIP__)
#error "gpu/common/grid_dependency.h is device code: include it from .hip files only"
#endif

namespace mlacheck::gpu::common {

// Blocks the thread until the stream's previous kernel has ended and its writes are visible.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

// Lets the stream's next kernel (launched with_previous) be placed once every block of this one
// has said so or ended (without it: once every block has ended, before the grid's end is
// published). Called at the start of the Q quantization's and the work list's kernels, short ones
// whose successor needs nothing else to start its own work: every block of this grid has started
// by then, so none can be kept off an SM. Not by the attention kernels: the merge kernel's blocks,
// placed once every attention block had started, sat resident beside them and made the hopper
// a16w16 4 x 8192 call slower, 27.4 -> 29.5 µs (docs/PERF.md, "Device runs 1-4 of 2026-12-03",
// run 1).
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

}  // namespace mlacheck::gpu::common
