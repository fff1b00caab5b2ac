// A timing probe, not built by CMake and not part of mlacheck (docs/HOPPER.md: "4 x 1024" and the
// 64 x 8192 rows): what the bytes and the launches alone cost a decode call on this GPU, timed the
// way `mlacheck bench --graph` times a call (gpu/timing.hip: CUDA events around one graph replay,
// the L2 flushed by a 256 MB read before each repetition; here the median of 200 after 10 warm-ups).
// No attention arithmetic: each scenario reads the KV bytes of a harness shape in the grid a
// mlacheck schedule uses, writes what that schedule writes (split partials or the bf16 output), and
// where the schedule has a merge kernel, runs one that reads the partials back, with and without
// programmatic dependent launch (gpu/common/launch_kernel.h). Where latency and launches set the
// time (4 x 1024, the no-op merge blocks) a figure is what a call of that grid and launch count
// costs before any arithmetic, and the gap to `bench` is the kernels' own chains. Where bandwidth
// sets it (64 x 8192, 256 x 8192) the plain 16-byte loads here read slower than the copy engine
// (256 x 8192 bf16 on an H100: 793 µs here, 764 for the hopper kernel, PERF.md), so those rows
// compare grids with one another, not a floor.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a docs/probes/decode_floor.cu -o decode_floor
//   ./decode_floor            (on the GPU machine; about 15 s; --reps N to change 200)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_common.h"

namespace {

// The problem's sizes (problem/shape.h): 16 heads, 512-dim values.
constexpr int64_t kHeads = 16, kVDim = 512;
// Loads a thread keeps in flight: 16 bytes each (the reader's and the flush's).
constexpr int kUnroll = 8;

// Block b reads its contiguous share of `words` 16-byte words, then writes `out_words` words of
// its own output region (values that depend on what it read, so no load is dropped).
__global__ void read_and_write(const uint4* kv, int64_t words, uint4* out, int64_t out_words) {
  const int64_t per_block = (words + gridDim.x - 1) / gridDim.x;
  const int64_t begin = blockIdx.x * per_block, end = begin + per_block < words ? begin + per_block : words;
  uint32_t acc = 0;
  int64_t i = begin + threadIdx.x;
  for (; i + (kUnroll - 1) * blockDim.x < end; i += kUnroll * blockDim.x) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = kv[i + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < end; i += blockDim.x) acc ^= kv[i].x ^ kv[i].y ^ kv[i].z ^ kv[i].w;
  const int64_t out_per_block = out_words / gridDim.x;
  for (int64_t o = threadIdx.x; o < out_per_block; o += blockDim.x)
    out[blockIdx.x * out_per_block + o] = make_uint4(acc, acc + 1, acc + 2, acc + 3);
}

// The merge's memory traffic: block r (one query row and head) reads `splits` partial rows of
// kVDim floats and writes kVDim bf16. The programmatic launch's wait first, as every mlacheck
// kernel has (gpu/common/grid_dependency.h); without that attribute it returns at once.
__global__ void merge_like(const float4* partials, int splits, uint2* out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int64_t row = blockIdx.x;
  float4 sum = make_float4(0, 0, 0, 0);
  for (int s = 0; s < splits; ++s) {
    const float4 v = partials[(row * splits + s) * (kVDim / 4) + threadIdx.x];
    sum.x += v.x; sum.y += v.y; sum.z += v.z; sum.w += v.w;
  }
  out[row * (kVDim / 4) + threadIdx.x] = make_uint2(__float_as_uint(sum.x + sum.y), __float_as_uint(sum.z + sum.w));
}

// A merge block that finds nothing to merge (gpu/common/merge.hip on a token the plan did not cut):
// the wait, its row's lookup, return. `rows_per_block` > 1: a thinner grid, each block looking up
// that many rows at once.
__global__ void lookup_and_return(const int* rows, int rows_per_block, int* never) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x < rows_per_block && rows[blockIdx.x * rows_per_block + threadIdx.x] == 0x9E3779B9) *never = 1;
}

__global__ void empty_kernel() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// A scenario's grid given per SM of the GPU it runs on (a persistent grid), not as a count.
constexpr unsigned kOnePerSm = 0, kTwoPerSm = ~0u;
// The no-op merge's rows: a merge block per (query row, head) of 256 one-token requests.
constexpr int kNoOpRows = 256 * kHeads;

struct Scenario {
  const char* name;
  int64_t kv_bytes;    // KV bytes read
  unsigned grid;       // attention blocks, or kOnePerSm / kTwoPerSm
  unsigned threads;    // their threads
  int64_t out_bytes;   // what the attention grid writes (partials, or the output)
  int merge_rows;      // > 0: a merge kernel of this many blocks after it
  int splits;          // partial rows a merge block reads; 0: lookup_and_return, merge_rows blocks
                       // of kNoOpRows / merge_rows rows each
  bool programmatic;   // the merge (or the second empty kernel) launched programmatically
  bool empty;          // no reads: `kernels` empty kernels of `grid` blocks
  int kernels;
};

}  // namespace

int main(int argc, char** argv) {
  const int reps = probe::reps_from_args(argc, argv);
  if (reps < 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("%s, %u SMs; median of %d graph replays, L2 flushed before each, µs\n\n", prop.name, sms, reps);

  // Shapes (bytes of one key row: bf16 1152, fp8 576).
  const auto kv = [](int64_t batch, int64_t len, int64_t row) { return batch * len * row; };
  const int64_t partial_row = kHeads * kVDim * 4;  // one split's float32 partial of one query
  const int64_t out_row = kHeads * kVDim * 2;      // one query's bf16 output
  std::vector<Scenario> scenarios = {
      {"empty kernel, 1 block", 0, 1, 32, 0, 0, 0, false, true, 1},
      {"two empty kernels, the second programmatic", 0, 1, 32, 0, 0, 0, true, true, 2},
      {"two empty kernels, plain", 0, 1, 32, 0, 0, 0, false, true, 2},
      // 4 x 1024: split-K 16 (one 64-key tile a block), partials, then the merge (4 x 16 rows). A
      // block's tile in one round of loads, as one bulk copy takes it: 576 threads x 8 x 16 bytes
      // = 73 728 bytes, a bf16 tile (an fp8 tile: 288 threads).
      {"4x1024 bf16: 64 blocks write partials", kv(4, 1024, 1152), 64, 576, 64 * partial_row, 0, 0, false, false, 0},
      {"4x1024 bf16: + merge kernel, programmatic", kv(4, 1024, 1152), 64, 576, 64 * partial_row, 64, 16, true, false, 0},
      {"4x1024 bf16: + merge kernel, plain", kv(4, 1024, 1152), 64, 576, 64 * partial_row, 64, 16, false, false, 0},
      {"4x1024 bf16: 4 blocks write the output (one kernel)", kv(4, 1024, 1152), 4, 1024, 4 * out_row, 0, 0, false, false, 0},
      {"4x1024 fp8: + merge kernel, programmatic", kv(4, 1024, 576), 64, 288, 64 * partial_row, 64, 16, true, false, 0},
      // 64 x 8192: split-K 2 on 128 SMs against all of them.
      {"64x8192 bf16: 128 blocks", kv(64, 8192, 1152), 128, 1024, 128 * partial_row, 0, 0, false, false, 0},
      {"64x8192 bf16: 132 blocks", kv(64, 8192, 1152), kOnePerSm, 1024, 128 * partial_row, 0, 0, false, false, 0},
      {"64x8192 bf16: 264 blocks", kv(64, 8192, 1152), kTwoPerSm, 1024, 128 * partial_row, 0, 0, false, false, 0},
      {"64x8192 fp8: 128 blocks", kv(64, 8192, 576), 128, 1024, 128 * partial_row, 0, 0, false, false, 0},
      {"64x8192 fp8: 132 blocks", kv(64, 8192, 576), kOnePerSm, 1024, 128 * partial_row, 0, 0, false, false, 0},
      {"64x8192 fp8: 128 blocks + merge (1024 rows of 2), programmatic", kv(64, 8192, 576), 128, 1024,
       128 * partial_row, 1024, 2, true, false, 0},
      // A persistent call on a batch of 256 x 996 keys (layout_cost's uniform_bs256_kv996) whose plan
      // cuts nothing: the attention grid writes the output, then the merge finds nothing to merge.
      {"256x996 bf16: 132 blocks, no merge", kv(256, 996, 1152), kOnePerSm, 1024, 256 * out_row, 0, 0, false, false, 0},
      {"256x996 bf16: + 4096 no-op merge blocks, programmatic", kv(256, 996, 1152), kOnePerSm, 1024, 256 * out_row, kNoOpRows, 0,
       true, false, 0},
      {"256x996 bf16: + 1024 no-op merge blocks (4 rows each), programmatic", kv(256, 996, 1152), kOnePerSm, 1024,
       256 * out_row, kNoOpRows / 4, 0, true, false, 0},
      {"256x8192 bf16: 132 blocks", kv(256, 8192, 1152), kOnePerSm, 1024, 256 * out_row, 0, 0, false, false, 0},
      {"256x8192 fp8: 132 blocks", kv(256, 8192, 576), kOnePerSm, 1024, 256 * out_row, 0, 0, false, false, 0},
  };
  for (Scenario& s : scenarios) s.grid = s.grid == kOnePerSm ? sms : s.grid == kTwoPerSm ? 2 * sms : s.grid;

  int64_t most_kv = 0, most_out = 0, most_merged = 0;
  for (const Scenario& s : scenarios) {
    most_kv = std::max(most_kv, s.kv_bytes);
    most_out = std::max(most_out, std::max(s.out_bytes, int64_t{s.merge_rows} * s.splits * kVDim * 4));
    most_merged = std::max(most_merged, int64_t{s.merge_rows} * kVDim * 2);
  }
  uint4 *kv_buf = nullptr, *out_buf = nullptr, *flush_buf = nullptr;
  uint2* merged = nullptr;
  uint32_t* sink = nullptr;
  int *rows = nullptr, *never = nullptr;
  const int64_t flush_bytes = int64_t{256} << 20;
  CHECK(cudaMalloc(&kv_buf, most_kv));
  CHECK(cudaMalloc(&out_buf, std::max<int64_t>(most_out, 16)));
  CHECK(cudaMalloc(&merged, std::max<int64_t>(most_merged, 16)));
  CHECK(cudaMalloc(&flush_buf, flush_bytes));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMalloc(&rows, kNoOpRows * sizeof(int)));
  CHECK(cudaMemset(rows, 0x01, kNoOpRows * sizeof(int)));
  CHECK(cudaMalloc(&never, sizeof(int)));
  CHECK(cudaMemset(kv_buf, 0x5A, most_kv));  // defined contents, never zeros
  CHECK(cudaMemset(out_buf, 0x33, std::max<int64_t>(most_out, 16)));
  CHECK(cudaMemset(flush_buf, 0x5A, flush_bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::printf("| scenario | grid | KV MB | median | p10 | p90 | KV GB/s at the median |\n|---|---|---|---|---|---|---|\n");
  for (const Scenario& s : scenarios) {
    const auto call = [&] {
      if (s.empty) {
        for (int k = 0; k < s.kernels; ++k) probe::launch(empty_kernel, s.grid, s.threads, k > 0 && s.programmatic, stream);
        return;
      }
      probe::launch(read_and_write, s.grid, s.threads, false, stream, static_cast<const uint4*>(kv_buf), s.kv_bytes / 16,
             out_buf, s.out_bytes / 16);
      if (s.merge_rows > 0 && s.splits == 0)
        probe::launch(lookup_and_return, static_cast<unsigned>(s.merge_rows), 128u, s.programmatic, stream,
               static_cast<const int*>(rows), kNoOpRows / s.merge_rows, never);
      else if (s.merge_rows > 0)
        probe::launch(merge_like, static_cast<unsigned>(s.merge_rows), static_cast<unsigned>(kVDim / 4), s.programmatic,
               stream, reinterpret_cast<const float4*>(out_buf), s.splits, merged);
    };
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    call();
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    for (int i = 0; i < 10; ++i) CHECK(cudaGraphLaunch(exec, stream));
    const std::vector<float> us = probe::replay_times(exec, stream, reps, flush_buf, flush_bytes / 16, sink, 8 * sms);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    const float median = us[reps / 2], p10 = us[reps / 10], p90 = us[(9 * reps) / 10];
    std::printf("| %s | %u x %u | %.1f | %.2f | %.2f | %.2f | %.0f |\n", s.name, s.grid, s.threads, s.kv_bytes / 1e6,
                median, p10, p90, s.kv_bytes / (median * 1e3));
  }
  CHECK(cudaGetLastError());
  return 0;
}
