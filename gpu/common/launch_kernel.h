#pragma once
// Queues a kernel with a KernelStart (gpu/common/kernel_start.h). On NVIDIA with_previous is the
// launch attribute of programmatic stream serialization (the kernel must keep
// gpu/common/grid_dependency.h's rule), which lets the runtime overlap the two kernels
// "opportunistically" (its documentation): on the sm_90 devices this project's NVIDIA builds are
// for it does (docs/PERF.md, device runs 2-3 of 2026-12-05's twelfth session); no older device was
// tried. On AMD every kernel starts after_previous (HIP has no such launch).
#include <cstddef>
#include <stdexcept>

#include "gpu/common/kernel_start.h"
#include "gpu/platform.h"

namespace mlacheck::gpu::common {

// Where a kernel runs: its grid, blocks and dynamic shared memory, and, NVIDIA only, thread-block
// clusters of `cluster_blocks` blocks along x (0: none; gpu/hopper's merge inside a cluster).
struct LaunchShape {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
  unsigned cluster_blocks = 0;
};

#if defined(MLACHECK_GPU_PLATFORM_NVIDIA)
// The runtime's launch configuration of a shape and a KernelStart, for a launch or an occupancy
// query (cudaOccupancyMaxActiveClusters takes the same). config.attrs points into the object: not
// copyable.
struct NvidiaLaunchConfig {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attrs[2]{};
  NvidiaLaunchConfig(const LaunchShape& shape, hipStream_t stream, KernelStart start) {
    config.gridDim = shape.grid;
    config.blockDim = shape.block;
    config.dynamicSmemBytes = shape.shared_bytes;
    config.stream = stream;
    attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[0].val.programmaticStreamSerializationAllowed = start == KernelStart::with_previous ? 1 : 0;
    config.attrs = attrs;
    config.numAttrs = 1;
    if (shape.cluster_blocks > 0) {
      attrs[1].id = cudaLaunchAttributeClusterDimension;
      attrs[1].val.clusterDim.x = shape.cluster_blocks;
      attrs[1].val.clusterDim.y = 1;
      attrs[1].val.clusterDim.z = 1;
      config.numAttrs = 2;
    }
  }
  NvidiaLaunchConfig(const NvidiaLaunchConfig&) = delete;
  NvidiaLaunchConfig& operator=(const NvidiaLaunchConfig&) = delete;
};
#endif

template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), const LaunchShape& shape, hipStream_t stream, KernelStart start,
                   Args... args) {
#if defined(MLACHECK_GPU_PLATFORM_NVIDIA)
  const NvidiaLaunchConfig launch(shape, stream, start);
  MLACHECK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, args...));
#else
  static_cast<void>(start);  // HIP: stream order
  if (shape.cluster_blocks > 0) throw std::logic_error("launch_kernel: thread-block clusters are NVIDIA-only here");
  kernel<<<shape.grid, shape.block, shape.shared_bytes, stream>>>(args...);
  MLACHECK_GPU_CHECK(hipGetLastError());
#endif
}

template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                   hipStream_t stream, KernelStart start, Args... args) {
  launch_kernel(kernel, LaunchShape{grid, block, shared_bytes, 0}, stream, start, args...);
}

}  // namespace mlacheck::gpu::common
