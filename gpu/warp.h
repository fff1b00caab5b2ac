#pragma once
// Lane exchange inside a group of a warp. Every wrapper takes the group width as a template
// argument, checked against the physical warp (kWarpSize), so no kernel assumes 32 or 64 lanes.
// All lanes of the warp must reach the call together (as for the underlying intrinsics).
#include "gpu/platform.h"

#if !defined(__CUDACC__) && !defined(__HIP__)
#error "gpu/warp.h is device code: include it from .hip files only"
#endif

namespace mlacheck::gpu {

// value of lane (lane ^ lane_mask) within the group of Width lanes that holds this lane.
template <int Width, typename T>
__device__ __forceinline__ T shfl_xor(T value, int lane_mask) {
  static_assert(divides_warp(Width), "shuffle width must divide the warp");
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  return __shfl_xor(value, lane_mask, Width);
#else
  return __shfl_xor_sync(0xFFFFFFFFu, value, lane_mask, Width);
#endif
}

// Every lane of the warp waits, and its shared-memory writes before it are seen by the warp's lanes
// after it (__syncwarp(); on AMD the fences around a wavefront barrier, as block_sync is built).
__device__ __forceinline__ void warp_sync() {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#else
  __syncwarp();
#endif
}

// Sum over each group of Width consecutive lanes, returned to every lane of the group (butterfly).
template <int Width, typename T>
__device__ __forceinline__ T group_sum(T value) {
  static_assert(divides_warp(Width), "group width must divide the warp");
#pragma unroll
  for (int mask = Width / 2; mask >= 1; mask /= 2) value += shfl_xor<Width>(value, mask);
  return value;
}

// value of lane (lane - delta) within the group of Width lanes that holds this lane; lanes below
// delta get their own value.
template <int Width, typename T>
__device__ __forceinline__ T shfl_up(T value, int delta) {
  static_assert(divides_warp(Width), "shuffle width must divide the warp");
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  return __shfl_up(value, static_cast<unsigned>(delta), Width);
#else
  return __shfl_up_sync(0xFFFFFFFFu, value, static_cast<unsigned>(delta), Width);
#endif
}

// Inclusive prefix sum over each group of Width consecutive lanes, in lane order (Hillis-Steele:
// log2(Width) shuffles). Blocks of whole warps: the lane is threadIdx.x % Width.
template <int Width, typename T>
__device__ __forceinline__ T group_inclusive_sum(T value) {
  static_assert(divides_warp(Width), "group width must divide the warp");
  const int lane = static_cast<int>(threadIdx.x) % Width;
#pragma unroll
  for (int delta = 1; delta < Width; delta *= 2) {
    const T below = shfl_up<Width>(value, delta);
    if (lane >= delta) value += below;
  }
  return value;
}

}  // namespace mlacheck::gpu
