// What the CUDA timing probes beside this file share (each is built alone by nvcc; this header is
// found beside them): the error check, a launch with or without programmatic dependent launch, and
// the flush they run before each repetition, as `mlacheck bench` does (gpu/timing.hip's
// stream_read_kernel: a read of 256 MB by 8 blocks an SM).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    const cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

namespace probe {

// The flush's read. Variant: another instance of the same kernel, so that an attribute (a
// shared-memory carveout) can be set on one without the other.
template <int Variant = 0>
__global__ void flush_read(const uint4* data, int64_t n, uint32_t* sink) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  uint32_t acc = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    acc ^= data[i].x ^ data[i].w;
  if (acc == 0x9E3779B9u) *sink = acc;
}

// A kernel launch, with programmatic dependent launch where `programmatic` (as mlacheck launches a
// call's later kernels: gpu/common/launch_kernel.h).
template <class Kernel, class... Args>
void launch(Kernel k, unsigned grid, unsigned block, bool programmatic, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = programmatic ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&config, k, args...));
}

// The µs of `reps` replays of `exec`, each between two events and, where `flush` is not null, after
// the flush's read of `flush_words` 16-byte words by `flush_blocks` blocks; sorted.
inline std::vector<float> replay_times(cudaGraphExec_t exec, cudaStream_t stream, int reps, const uint4* flush,
                                       int64_t flush_words, uint32_t* sink, unsigned flush_blocks) {
  std::vector<cudaEvent_t> ev(2 * reps);
  for (cudaEvent_t& e : ev) CHECK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    if (flush != nullptr) flush_read<<<flush_blocks, 256, 0, stream>>>(flush, flush_words, sink);
    CHECK(cudaEventRecord(ev[2 * i], stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(ev[2 * i + 1], stream));
  }
  CHECK(cudaStreamSynchronize(stream));
  std::vector<float> us(reps);
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventElapsedTime(&us[i], ev[2 * i], ev[2 * i + 1]));
    us[i] *= 1000.0f;
  }
  for (cudaEvent_t e : ev) CHECK(cudaEventDestroy(e));
  std::sort(us.begin(), us.end());
  return us;
}

// The repetitions of `PROBE [--reps N]` (default 200), or -1 after printing the usage.
inline int reps_from_args(int argc, char** argv) {
  int reps = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--reps N]\n", argv[0]);
      return -1;
    }
  }
  return reps;
}

}  // namespace probe
