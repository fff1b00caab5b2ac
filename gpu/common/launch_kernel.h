#pragma once
// Queues a kernel with a KernelStart (gpu/common/kernel_start.h). On NVIDIA with_previous is the
// launch attribute of programmatic stream serialization (the kernel must keep
// gpu/common/grid_dependency.h's rule), which lets the runtime overlap the two kernels
// "opportunistically" (its documentation): on the sm_90 devices this project's NVIDIA builds are
// for it does (docs/PERF.md, device runs 2-3 of 2026-12-05's twelfth session); no older device was
// tried. On AMD every kernel starts after_previous (HIP has no such launch).
#include <cstddef>

#include "gpu/common/kernel_start.h"
#include "gpu/platform.h"

namespace mlacheck::gpu::common {

template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                   hipStream_t stream, KernelStart start, Args... args) {
#if defined(MLACHECK_GPU_PLATFORM_NVIDIA)
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = start == KernelStart::with_previous ? 1 : 0;
  config.attrs = &overlap;
  config.numAttrs = 1;
  MLACHECK_GPU_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
#else
  static_cast<void>(start);  // HIP: stream order
  kernel<<<grid, block, shared_bytes, stream>>>(args...);
  MLACHECK_GPU_CHECK(hipGetLastError());
#endif
}

}  // namespace mlacheck::gpu::common
