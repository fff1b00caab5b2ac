#pragma once
// The GPU platform layer: the one place that knows which vendor the code is built for.
//
// Kernels and launchers are HIP source. On AMD this header is just <hip/hip_runtime.h>. On NVIDIA
// the same files are compiled by nvcc as CUDA, and below is one small mapping of the HIP runtime
// calls and types this project uses onto CUDA's. Why not HIP's own NVIDIA backend
// (hip/nvidia_detail): the HIP headers Debian ships are ROCm 5.2 and do not compile against
// CUDA 13.
// Add a mapping only when a call is used; one line each, no behaviour of its own.
//
// Also here: the physical warp width (kWarpSize) and MLACHECK_GPU_CHECK.
//
// Which side: clang's HIP mode (__HIP__) or a HIP host build (__HIP_PLATFORM_AMD__) is AMD; nvcc
// (__CUDACC__), or a host C++ file of a build that links the CUDA runtime
// (MLACHECK_HAVE_GPU_RUNTIME, only the cuda backend links one), is NVIDIA.
#include <cstddef>

#include "gpu/error.h"
#include "quant/hd.h"

#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
#define MLACHECK_GPU_PLATFORM_AMD 1
#include <hip/hip_runtime.h>

#elif defined(__CUDACC__) || defined(MLACHECK_HAVE_GPU_RUNTIME)
#define MLACHECK_GPU_PLATFORM_NVIDIA 1
#include <cuda_runtime.h>

using hipError_t = cudaError_t;
inline constexpr hipError_t hipSuccess = cudaSuccess;

using hipMemcpyKind = cudaMemcpyKind;
inline constexpr hipMemcpyKind hipMemcpyHostToDevice = cudaMemcpyHostToDevice;
inline constexpr hipMemcpyKind hipMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
inline constexpr hipMemcpyKind hipMemcpyDeviceToDevice = cudaMemcpyDeviceToDevice;

using hipDeviceProp_t = cudaDeviceProp;

inline hipError_t hipMalloc(void** ptr, std::size_t bytes) { return cudaMalloc(ptr, bytes); }
template <typename T>
inline hipError_t hipMalloc(T** ptr, std::size_t bytes) {  // HIP's typed overload
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
inline hipError_t hipFree(void* ptr) { return cudaFree(ptr); }
inline hipError_t hipMemcpy(void* dst, const void* src, std::size_t bytes, hipMemcpyKind kind) {
  return cudaMemcpy(dst, src, bytes, kind);
}
inline hipError_t hipMemset(void* dst, int value, std::size_t bytes) {
  return cudaMemset(dst, value, bytes);
}
inline hipError_t hipDeviceSynchronize() { return cudaDeviceSynchronize(); }
inline hipError_t hipGetDeviceCount(int* count) { return cudaGetDeviceCount(count); }
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device) {
  return cudaGetDeviceProperties(prop, device);
}
inline hipError_t hipGetLastError() { return cudaGetLastError(); }
using hipFuncAttribute = cudaFuncAttribute;
inline constexpr hipFuncAttribute hipFuncAttributeMaxDynamicSharedMemorySize =
    cudaFuncAttributeMaxDynamicSharedMemorySize;
inline hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(func, attr, value);
}
inline const char* hipGetErrorString(hipError_t error) { return cudaGetErrorString(error); }

// Streams, events and graphs: launches are queued on a caller's stream, timed with events and
// replayed from a captured graph (gpu/timing.h).
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipGraph_t = cudaGraph_t;
using hipGraphExec_t = cudaGraphExec_t;
using hipStreamCaptureMode = cudaStreamCaptureMode;
inline constexpr hipStreamCaptureMode hipStreamCaptureModeThreadLocal =
    cudaStreamCaptureModeThreadLocal;
inline hipError_t hipStreamCreate(hipStream_t* stream) { return cudaStreamCreate(stream); }
inline hipError_t hipStreamDestroy(hipStream_t stream) { return cudaStreamDestroy(stream); }
inline hipError_t hipStreamSynchronize(hipStream_t stream) { return cudaStreamSynchronize(stream); }
inline hipError_t hipMemsetAsync(void* dst, int value, std::size_t bytes, hipStream_t stream) {
  return cudaMemsetAsync(dst, value, bytes, stream);
}
inline hipError_t hipEventCreate(hipEvent_t* event) { return cudaEventCreate(event); }
inline hipError_t hipEventDestroy(hipEvent_t event) { return cudaEventDestroy(event); }
inline hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  return cudaEventRecord(event, stream);
}
inline hipError_t hipEventSynchronize(hipEvent_t event) { return cudaEventSynchronize(event); }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  return cudaEventElapsedTime(ms, start, stop);
}
inline hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
  return cudaStreamBeginCapture(stream, mode);
}
inline hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph) {
  return cudaStreamEndCapture(stream, graph);
}
inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph,
                                               unsigned long long flags) {
  return cudaGraphInstantiateWithFlags(exec, graph, flags);
}
inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream) {
  return cudaGraphLaunch(exec, stream);
}
inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec) { return cudaGraphExecDestroy(exec); }
inline hipError_t hipGraphDestroy(hipGraph_t graph) { return cudaGraphDestroy(graph); }

#else
#error "gpu/platform.h is for GPU code: .hip files, or host files of a build with a GPU runtime"
#endif

namespace mlacheck::gpu {

// Lanes of the hardware warp (wavefront). CDNA (gfx9: MI250X, MI300X, MI355X) runs wave64; RDNA's
// wave32 is not a target. NVIDIA warps are 32 lanes on every architecture. Kernels size groups from
// this constant and never write 32 or 64 themselves.
#if defined(MLACHECK_GPU_PLATFORM_AMD)
inline constexpr int kWarpSize = 64;
#else
inline constexpr int kWarpSize = 32;
#endif

// For static_asserts on lane-group sizes (shuffle widths, threads per row): a group must tile the
// warp exactly, which also makes it a power of two since kWarpSize is one.
MLACHECK_HD constexpr bool divides_warp(int group) noexcept {
  return group >= 1 && group <= kWarpSize && kWarpSize % group == 0;
}

}  // namespace mlacheck::gpu

#if defined(__AMDGCN__) && !defined(__GFX9__)
#error "mlacheck's AMD kernels assume CDNA (gfx9, wave64): gfx90a, gfx942 or gfx950"
#endif
#if defined(__AMDGCN_WAVEFRONT_SIZE)
static_assert(__AMDGCN_WAVEFRONT_SIZE == mlacheck::gpu::kWarpSize,
              "the compiler's wavefront size disagrees with kWarpSize");
#endif

// Checks a runtime call that returns hipError_t; on failure throws mlacheck::gpu::Error with the
// call's text, file, line and the runtime's message. The runtime's last-error slot is cleared
// first, so that a caller who catches the error and goes on does not meet it again at the next
// hipGetLastError() (sticky errors, such as a kernel fault, stay).
#define MLACHECK_GPU_CHECK(call)                                                             \
  do {                                                                                       \
    const hipError_t mlacheck_gpu_status_ = (call);                                          \
    if (mlacheck_gpu_status_ != hipSuccess) {                                                \
      static_cast<void>(hipGetLastError());                                                  \
      ::mlacheck::gpu::fail(#call, __FILE__, __LINE__, static_cast<int>(mlacheck_gpu_status_), \
                            hipGetErrorString(mlacheck_gpu_status_));                        \
    }                                                                                        \
  } while (false)
