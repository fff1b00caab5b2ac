// A correct thread-block-cluster kernel that compute-sanitizer's racecheck (2025.3.1, CUDA 13, H200)
// cannot run once the kernel is left out by --kernel-name-exclude: "Internal Sanitizer Error: The
// Sanitizer failed to handle a hardware exception", an illegal memory access, and the context lost.
// The same kernel runs clean without the sanitizer and under racecheck when it is not excluded
// (docs/PERF.md, "Device run 1 of 2026-12-03's third session"). It is the hopper split-K kernel's
// cluster hand-off reduced to its parts (gpu/sm90/cluster.h): an mbarrier per block that thread 0 of
// every block arrives on remotely (mapa), waits at cluster scope, a read of a peer's shared memory,
// and a warp that leaves at once as the hopper producer does. scripts/device-check.sh runs it on
// every racecheck step: while the sanitizer still fails on it, the racecheck step leaves the cluster
// launches (the fused hopper split-K cases) out of its test filter, since it must exclude the hopper
// kernel for racecheck_handoff_repro.cu's reason; once it runs, that filter must go.
//   mlacheck-racecheck-cluster-repro [splits]   clusters of `splits` blocks (2..8, default 8)
// Exit status 0 when the kernel ran and every block read its peers' values, 1 otherwise, 2 on a
// usage error.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kConsumerThreads = 256;
constexpr int kBlockThreads = kConsumerThreads + 32;  // the last warp leaves at once
constexpr int kRounds = 3;
constexpr int kClustersPerLaunch = 8;
constexpr int kValues = 32;

// The shared address of `p` in the block of rank `rank` of this cluster.
__device__ uint32_t peer_address(const void* p, uint32_t rank) {
  const auto local = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  uint32_t remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

__global__ void __launch_bounds__(kBlockThreads, 1) cluster_handoff_kernel(float* out) {
  __shared__ alignas(8) uint64_t arrived;
  __shared__ float values[kValues];
  uint32_t blocks = 0, rank = 0;
  asm("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(blocks));
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  const auto bar = static_cast<uint32_t>(__cvta_generic_to_shared(&arrived));
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(blocks) : "memory");
  if (threadIdx.x < kValues) values[threadIdx.x] = static_cast<float>(rank * kValues + threadIdx.x);
  asm volatile(
      "fence.mbarrier_init.release.cluster;\n"
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  if (threadIdx.x >= kConsumerThreads) return;
  float sum = 0.0f;
  for (int round = 0; round < kRounds; ++round) {
    if (threadIdx.x == 0) {
      asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
      for (uint32_t r = 0; r < blocks; ++r)
        asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(peer_address(&arrived, r))
                     : "memory");
    }
    asm volatile(
        "{\n .reg .pred done;\n wait:\n"
        " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
        " @!done bra wait;\n}\n" ::"r"(bar),
        "r"(round & 1)
        : "memory");
    if (threadIdx.x < kValues) {
      float v = 0.0f;
      asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(peer_address(&values[threadIdx.x], (rank + 1) % blocks))
                   : "memory");
      sum += v;
    }
  }
  // The peers read this block's values: none leaves before all are done.
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
  if (threadIdx.x < kValues) out[blockIdx.x * kValues + threadIdx.x] = sum;
}

}  // namespace

int main(int argc, char** argv) {
  const int splits = argc > 1 ? std::atoi(argv[1]) : 8;
  if (argc > 2 || splits < 2 || splits > 8) {
    std::fprintf(stderr, "usage: %s [splits: 2..8]\n", argv[0]);
    return 2;
  }
  const int blocks = kClustersPerLaunch * splits;
  float* out = nullptr;
  if (cudaMalloc(&out, sizeof(float) * blocks * kValues) != cudaSuccess) return 1;
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kBlockThreads);
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(splits);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  cudaError_t e = cudaLaunchKernelEx(&config, cluster_handoff_kernel, out);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  int wrong = 0;
  if (e == cudaSuccess) {
    float host[8 * 8 * kValues];
    e = cudaMemcpy(host, out, sizeof(float) * blocks * kValues, cudaMemcpyDeviceToHost);
    for (int b = 0; e == cudaSuccess && b < blocks; ++b)
      for (int i = 0; i < kValues; ++i) {
        const int peer = (b % splits + 1) % splits;
        if (host[b * kValues + i] != static_cast<float>(kRounds * (peer * kValues + i))) ++wrong;
      }
  }
  std::printf("clusters of %d: %s, %d values wrong\n", splits, cudaGetErrorString(e), wrong);
  return e == cudaSuccess && wrong == 0 ? 0 : 1;
}
