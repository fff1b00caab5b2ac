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

// Sum over each group of Width consecutive lanes, returned to every lane of the group (butterfly).
template <int Width, typename T>
__device__ __forceinline__ T group_sum(T value) {
  static_assert(divides_warp(Width), "group width must divide the warp");
#pragma unroll
  for (int mask = Width / 2; mask >= 1; mask /= 2) value += shfl_xor<Width>(value, mask);
  return value;
}

}  // namespace mlacheck::gpu
