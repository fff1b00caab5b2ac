#pragma once
// Force-included (-include) by the HIP device check only (cmake/MlacheckGpu.cmake); never by a
// real ROCm build, which links the device libraries instead.
//
// Why: the check compiles with -nogpulib because no ROCm device library for CDNA is installed here,
// and ROCm 5.2's <hip/hip_runtime.h> reads threadIdx, blockIdx, blockDim and gridDim through
// __ockl_* functions of that library. Left undefined they stay as real calls, which changes
// register use, adds a stack (scratch) and turns every number of the resource report into an
// unresolved symbol. These definitions use the same hardware intrinsics as the library's
// workitem functions, so the kernels compile to what they would be with the library linked.
#include <stddef.h>

#if defined(__HIP__) && defined(__AMDGCN__)

#define MLACHECK_OCKL_DIM(dim, x, y, z) ((dim) == 0 ? (x) : (dim) == 1 ? (y) : (z))

extern "C" __attribute__((device, const)) inline size_t __ockl_get_local_id(unsigned dim) {
  return MLACHECK_OCKL_DIM(dim, __builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),
                           __builtin_amdgcn_workitem_id_z());
}

extern "C" __attribute__((device, const)) inline size_t __ockl_get_group_id(unsigned dim) {
  return MLACHECK_OCKL_DIM(dim, __builtin_amdgcn_workgroup_id_x(),
                           __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z());
}

extern "C" __attribute__((device, const)) inline size_t __ockl_get_local_size(unsigned dim) {
  return MLACHECK_OCKL_DIM(dim, __builtin_amdgcn_workgroup_size_x(),
                           __builtin_amdgcn_workgroup_size_y(),
                           __builtin_amdgcn_workgroup_size_z());
}

extern "C" __attribute__((device, const)) inline size_t __ockl_get_global_size(unsigned dim) {
  return MLACHECK_OCKL_DIM(dim, __builtin_amdgcn_grid_size_x(), __builtin_amdgcn_grid_size_y(),
                           __builtin_amdgcn_grid_size_z());
}

// Work-groups per dimension, the last one possibly partial (as the library computes it).
extern "C" __attribute__((device, const)) inline size_t __ockl_get_num_groups(unsigned dim) {
  const size_t global = __ockl_get_global_size(dim);
  const size_t local = __ockl_get_local_size(dim);
  return (global + local - 1) / local;
}

#undef MLACHECK_OCKL_DIM

#endif
