#pragma once
// NVIDIA sm_90's bulk tensor copy engine (TMA; PTX ISA "cp.async.bulk.tensor"): one thread asks
// for a box of a 2-D tensor described by a tensor map (gpu/sm90/tensor_map.h) and the engine
// writes it to shared memory in the map's swizzled layout, counting its bytes off an mbarrier's
// transaction count (gpu/mma/mma_nvidia.h bulk_barrier_*). Rows past the tensor's end land as
// zeros. sm_90a device code only, like gpu/sm90/wgmma.h.
#include <cstdint>

#include <cuda.h>

#include "gpu/mma/mma_nvidia.h"
#include "gpu/platform.h"

#if !defined(__CUDACC__)
#error "gpu/sm90/tma.h is NVIDIA device code: include it from the sm_90a sources only"
#endif

namespace mlacheck::gpu::sm90 {

// The box of `map` at element column `col` (innermost dimension) and row `row` into shared `dst`
// (aligned as the map's swizzle needs: 1024 bytes for a whole 128-byte-swizzled box), completing
// on `bar`. `map` must be a kernel parameter declared __grid_constant__ (its address is the
// tensor map's generic address).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int32_t col,
                                            int32_t row, mma::BulkBarrier* bar) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n"
      :
      : "r"(mma::shared_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row),
        "r"(mma::shared_address(bar))
      : "memory");
#else
  (void)dst;
  (void)map;
  (void)col;
  (void)row;
  (void)bar;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// An L2 cache policy for data read once: its lines are the first evicted (PTX createpolicy).
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy = 0;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  return policy;
}

// tma_load_2d with an L2 cache policy (l2_evict_first_policy).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int32_t col,
                                            int32_t row, mma::BulkBarrier* bar, uint64_t policy) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n"
      :
      : "r"(mma::shared_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row),
        "r"(mma::shared_address(bar)), "l"(policy)
      : "memory");
#else
  (void)dst;
  (void)map;
  (void)col;
  (void)row;
  (void)bar;
  (void)policy;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// The box of a 1-D tensor map (gpu/sm90/tensor_map.h byte_tensor_map_1d) starting at element `x`
// (at a 16-byte multiple: a box from byte 18 r was an illegal instruction on the H200, device run 1
// of hopper-mxfp4) into shared `dst` (128-byte aligned, as every bulk tensor copy's destination),
// completing on `bar`, with an L2 cache policy: the MXFP4 block scales of the Hopper family, whose
// 18-byte rows no plain bulk copy can move. Elements past the tensor's end land as zeros, and the
// whole box counts on `bar`.
__device__ __forceinline__ void tma_load_1d(void* dst, const CUtensorMap* map, int32_t x,
                                            mma::BulkBarrier* bar, uint64_t policy) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2}], [%3], %4;\n"
      :
      : "r"(mma::shared_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x),
        "r"(mma::shared_address(bar)), "l"(policy)
      : "memory");
#else
  (void)dst;
  (void)map;
  (void)x;
  (void)bar;
  (void)policy;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// mma::bulk_copy (a plain bulk copy: `bytes` contiguous bytes, a multiple of 16, both addresses
// 16-byte aligned, completing on `bar`) with an L2 cache policy (l2_evict_first_policy): the fp8
// tiles of the Hopper family, whose rows are not a multiple of a 128-byte swizzle span.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, uint32_t bytes,
                                          mma::BulkBarrier* bar, uint64_t policy) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;\n"
      :
      : "r"(mma::shared_address(dst)), "l"(src), "r"(bytes), "r"(mma::shared_address(bar)),
        "l"(policy)
      : "memory");
#else
  (void)dst;
  (void)src;
  (void)bytes;
  (void)bar;
  (void)policy;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// Fetches the tensor map's 128 bytes ahead of its first use.
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("prefetch.tensormap [%0];\n" : : "l"(reinterpret_cast<uint64_t>(map)) : "memory");
#else
  (void)map;
#endif
}

}  // namespace mlacheck::gpu::sm90
