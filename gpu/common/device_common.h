#pragma once
// Small device helpers shared by the portable kernels: bf16 pairs in one 32-bit word, float
// rounding control, block-wide max.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/warp.h"
#include "quant/bits.h"

#if !defined(__CUDACC__) && !defined(__HIP__)
#error "gpu/common/device_common.h is device code: include it from .hip files only"
#endif

// The kernels follow the reference's float32 steps one rounding at a time: no contraction of a
// multiply and an add into an FMA unless written as one (fma_f). On NVIDIA gpu/CMakeLists.txt
// passes --fmad=false; clang (AMD) takes this pragma for the rest of each including file.
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace mlacheck::gpu::common {

// __syncthreads(): every thread of the block waits, and shared-memory writes before it are seen
// after it. On AMD spelled out as ROCm's __syncthreads() expands (release fence, s_barrier,
// acquire fence, work-group scope) with compiler builtins: ROCm 5.2's header reaches the fences
// through a device-library call, which the library-less AMD device check would keep as a call
// with a stack.
__device__ __forceinline__ void block_sync() {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
#else
  __syncthreads();
#endif
}

// Element 2j of a row is the low half of word j (little-endian bf16 pairs).
__device__ __forceinline__ float lo_bf16(uint32_t w) { return quant::f32_from_bits(w << 16); }
__device__ __forceinline__ float hi_bf16(uint32_t w) {
  return quant::f32_from_bits(w & 0xFFFF0000u);
}
__device__ __forceinline__ uint32_t pack_bf16(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

// Max over the block of one unsigned value per thread; every thread gets it. `scratch` holds
// Threads / kWarpSize words. Contains barriers: every thread of the block must call it.
template <int Threads>
__device__ uint32_t block_max_u32(uint32_t value, uint32_t* scratch) {
  static_assert(Threads % kWarpSize == 0, "the block must be whole warps");
  constexpr int kWarps = Threads / kWarpSize;
#pragma unroll
  for (int mask = kWarpSize / 2; mask >= 1; mask /= 2) {
    const uint32_t other = shfl_xor<kWarpSize>(value, mask);
    value = other > value ? other : value;
  }
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  if (lane == 0) scratch[warp] = value;
  block_sync();
  uint32_t result = scratch[0];
  for (int w = 1; w < kWarps; ++w) result = scratch[w] > result ? scratch[w] : result;
  block_sync();  // scratch may be reused by the caller
  return result;
}

}  // namespace mlacheck::gpu::common
