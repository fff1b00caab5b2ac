// A timing probe, not built by CMake and not part of mlacheck (docs/HOPPER.md "4 x 1024"): what a
// kernel's launch shape costs before it does anything, and how long a block's first load takes
// after the L2 flush, timed the way `mlacheck bench --graph` times a call (gpu/timing.hip: CUDA
// events around one graph replay, the L2 flushed by a 256 MB read before each repetition; here the
// median of --reps after 10 warm-ups). decode_floor.cu beside it times the bytes and launches of
// whole calls; this one takes apart what it leaves over at 4 x 1024 (the hopper bf16 call 14.4 µs
// on an H100, its blocks' chain 7.3 µs of it, an empty kernel 4.0): the launch of 64 blocks of
// 384 threads with the kernel's ~180 KB of shared memory in 16-block clusters, and the latency of
// the first bytes a block asks for.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a docs/probes/launch_shape.cu -o launch_shape
//   ./launch_shape            (on the GPU machine; a few seconds; --reps N to change 200)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_common.h"

namespace {

// The hopper a16w16 kernel at 4 x 1024 (gpu/hopper/traits.h's plan, `bench --stamps` of 12-06's
// sixteenth session): 64 blocks (16 splits of a 64-key tile, 4 requests) of 384 threads, two
// stages of 73 728-byte tiles + Q + P and the rest, in 16-block clusters.
constexpr unsigned kBlocks = 64, kThreads = 384;
constexpr int kKernelShared = 180 * 1024;
constexpr int64_t kTileBytes = 64 * 1152;  // a block's bf16 tile: 64 keys of 576 bf16

__global__ void empty_kernel() {}

// Thread 0 of each block: the global timer at entry, then three dependent 16-byte loads of its
// tile region (its first line; a line 4 KB on, same 2 MB page; a line 64 KB on), each timed.
// stamps[block * 4 + k]: the entry and the end of each load, ns.
__global__ void first_loads(const uint4* kv, uint64_t* stamps, uint4* sink) {
  if (threadIdx.x != 0) return;
  uint64_t t[4];
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[0]));
  const uint4* tile = kv + blockIdx.x * (kTileBytes / 16);
  uint4 acc = make_uint4(0, 0, 0, 0);
  const int64_t offsets[3] = {0, 4096 / 16, 65536 / 16};
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    // The address depends on the last value, so each load waits for the one before it.
    const uint4 v = tile[offsets[k] + (acc.x & 1)];
    acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[k + 1]) : "r"(acc.x) : "memory");
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) stamps[blockIdx.x * 4 + k] = t[k];
  if (acc.x == 0x9E3779B9u) sink[blockIdx.x] = acc;
}

struct Shape {
  const char* name;
  unsigned grid, threads;
  int shared;   // dynamic shared memory bytes
  int cluster;  // blocks a cluster; 1: none
  bool loads;   // first_loads instead of the empty kernel
};

template <class Kernel, class... Args>
void launch(const Shape& s, Kernel k, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(s.grid);
  config.blockDim = dim3(s.threads);
  config.dynamicSmemBytes = static_cast<size_t>(s.shared);
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(s.cluster);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = s.cluster > 1 ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&config, k, args...));
}

template <class Kernel>
void allow(Kernel k) {
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = probe::reps_from_args(argc, argv);
  if (reps < 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; median of %d graph replays, µs\n\n", prop.name, prop.multiProcessorCount, reps);
  allow(empty_kernel);
  allow(first_loads);
  // The second flush asks for the largest shared-memory carveout, as the shapes with shared memory
  // need: if the SMs' reconfiguration between the flush and the call costs, these rows lose it.
  CHECK(cudaFuncSetAttribute(probe::flush_read<1>, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared));

  const int64_t flush_bytes = int64_t{256} << 20;
  uint4 *flush_buf = nullptr, *kv = nullptr, *sink4 = nullptr;
  uint32_t* sink = nullptr;
  uint64_t* stamps = nullptr;
  CHECK(cudaMalloc(&flush_buf, flush_bytes));
  CHECK(cudaMalloc(&kv, kBlocks * kTileBytes));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMalloc(&sink4, kBlocks * sizeof(uint4)));
  CHECK(cudaMalloc(&stamps, kBlocks * 4 * sizeof(uint64_t)));
  CHECK(cudaMemset(flush_buf, 0x5A, flush_bytes));
  CHECK(cudaMemset(kv, 0x5A, kBlocks * kTileBytes));  // defined contents, never zeros
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int64_t flush_words = flush_bytes / 16;
  const unsigned flush_grid = 8u * static_cast<unsigned>(prop.multiProcessorCount);

  const std::vector<Shape> shapes = {
      {"empty, 1 block of 32", 1, 32, 0, 1, false},
      {"empty, 64 x 384", kBlocks, kThreads, 0, 1, false},
      {"empty, 64 x 384, 180 KB shared", kBlocks, kThreads, kKernelShared, 1, false},
      {"empty, 64 x 384, 227 KB shared", kBlocks, kThreads, 227 * 1024, 1, false},
      {"empty, 64 x 384, clusters of 16", kBlocks, kThreads, 0, 16, false},
      {"empty, 64 x 384, clusters of 8", kBlocks, kThreads, 0, 8, false},
      {"empty, 64 x 384, 180 KB, clusters of 16 (the a16w16 4x1024 shape)", kBlocks, kThreads, kKernelShared, 16, false},
      {"empty, 64 x 384, 180 KB, clusters of 8", kBlocks, kThreads, kKernelShared, 8, false},
      {"first loads, 64 x 384, 180 KB, clusters of 16", kBlocks, kThreads, kKernelShared, 16, true},
      {"first loads, 64 x 384", kBlocks, kThreads, 0, 1, true},
  };
  const char* flushes[] = {"flushed", "flushed, the flush's carveout max shared", "not flushed"};
  std::printf("%-70s %10s %12s %10s\n", "shape", "flushed", "flush:shared", "warm L2");
  std::vector<std::vector<float>> load_ns(3 * shapes.size());
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const Shape& s = shapes[si];
    std::printf("%-70s", s.name);
    for (int f = 0; f < 3; ++f) {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      if (s.loads) launch(s, first_loads, stream, static_cast<const uint4*>(kv), stamps, sink4);
      else launch(s, empty_kernel, stream);
      CHECK(cudaStreamEndCapture(stream, &graph));
      CHECK(cudaGraphInstantiate(&exec, graph, 0));
      std::vector<cudaEvent_t> ev(2 * reps);
      for (cudaEvent_t& e : ev) CHECK(cudaEventCreate(&e));
      std::vector<uint64_t> host(kBlocks * 4);
      std::vector<float> deltas[3];
      for (int i = 0; i < 10 + reps; ++i) {
        if (f == 0) probe::flush_read<0><<<flush_grid, 256, 0, stream>>>(flush_buf, flush_words, sink);
        if (f == 1) probe::flush_read<1><<<flush_grid, 256, 0, stream>>>(flush_buf, flush_words, sink);
        CHECK(cudaGetLastError());
        if (i >= 10) CHECK(cudaEventRecord(ev[2 * (i - 10)], stream));
        CHECK(cudaGraphLaunch(exec, stream));
        if (i >= 10) CHECK(cudaEventRecord(ev[2 * (i - 10) + 1], stream));
        if (s.loads && i >= 10 && i < 30) {  // 20 repetitions' per-block load latencies
          CHECK(cudaMemcpyAsync(host.data(), stamps, host.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream));
          CHECK(cudaStreamSynchronize(stream));
          for (unsigned b = 0; b < kBlocks; ++b)
            for (int k = 0; k < 3; ++k)
              deltas[k].push_back(static_cast<float>(host[b * 4 + k + 1] - host[b * 4 + k]));
        }
      }
      CHECK(cudaStreamSynchronize(stream));
      std::vector<float> us(reps);
      for (int i = 0; i < reps; ++i) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        us[i] = 1000.0f * ms;
      }
      std::printf(" %10.2f", median(us));
      if (s.loads)
        for (int k = 0; k < 3; ++k) load_ns[3 * f + k].push_back(median(deltas[k]));
      for (cudaEvent_t e : ev) CHECK(cudaEventDestroy(e));
      CHECK(cudaGraphExecDestroy(exec));
      CHECK(cudaGraphDestroy(graph));
    }
    std::printf("\n");
  }
  // The loads' latencies (the copies of the timed replays were made between replays, so the
  // flush before each is the one the replay had).
  std::printf("\nfirst_loads' per-block latencies, median over 64 blocks x 20 replays, ns "
              "(first line / a line 4 KB on / a line 64 KB on):\n");
  int row = 0;
  for (const Shape& s : shapes) {
    if (!s.loads) continue;
    for (int f = 0; f < 3; ++f)
      std::printf("  %-50s %-42s %7.0f %7.0f %7.0f\n", s.name, flushes[f], load_ns[3 * f][row],
                  load_ns[3 * f + 1][row], load_ns[3 * f + 2][row]);
    ++row;
  }
  return 0;
}
