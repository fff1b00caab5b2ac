// What the CUDA timing probes beside this file share (each is built alone by nvcc; this header is
// found beside them): the error check and the flush they run before each repetition, as
// `mlacheck bench` does (gpu/timing.hip's stream_read_kernel: a read of 256 MB by 8 blocks an SM).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
