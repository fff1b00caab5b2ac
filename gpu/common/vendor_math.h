#pragma once
// b^x and log_b x (b = e or 2) in float32 by the vendor's own functions, for the hot paths whose
// error the kernel bound allows (check/tolerance.cpp kGpuExpUlps): the hopper and mma kernels'
// softmax and the hopper family's split-K merge (gpu/common/merge_math.h MergeWeights::vendor).
// CUDA exp2f / expf are within 2 ulp, log2f / logf within 1 ulp (CUDA C Programming Guide,
// "Mathematical Functions"). On AMD v_exp_f32 / v_log_f32 (base 2) directly: no device library is
// linked there (device_math.h says why). Device code only.
#include "gpu/common/device_math.h"
#include "gpu/platform.h"

namespace mlacheck::gpu::common {

template <bool Base2>
__device__ __forceinline__ float vendor_exp(float x) {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  return __builtin_amdgcn_exp2f(Base2 ? x : x * static_cast<float>(math_detail::kLog2e));
#else
  return Base2 ? exp2f(x) : expf(x);
#endif
}

template <bool Base2>
__device__ __forceinline__ float vendor_log(float x) {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  const float log2_x = __builtin_amdgcn_logf(x);
  return Base2 ? log2_x : log2_x * static_cast<float>(math_detail::kLn2);
#else
  return Base2 ? log2f(x) : logf(x);
#endif
}

}  // namespace mlacheck::gpu::common
