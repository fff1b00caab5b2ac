// A race-free kernel that compute-sanitizer's racecheck reports hazards in (CUDA 13, H200): the
// hopper family's hand-off between its two consumer warpgroups, reduced to its barriers. It exists
// so that scripts/device-check.sh can keep the hopper attention kernel out of racecheck for a
// reason that is checked on every run, not assumed (docs/PERF.md, "Device runs 9-15").
//
// Threads 0..255 are two warpgroups (a 288-thread block's last warp joins no named barrier, as the
// hopper kernel's producer). Tile t belongs to warpgroup t % 2: its first four lanes write pub[owner],
// then both warpgroups meet at barrier 4 + owner (256 threads) and the other reads pub[owner]. Each
// warpgroup meets the other at every tile in tile order, so every read of tile t precedes the write
// of tile t + 2 and follows the write of tile t.
//   plain           just that: racecheck reports 0 hazards
//   local-barriers  the same plus a warpgroup-local exchange between two bar.sync (1 + warpgroup),
//                   128 threads (the hopper kernel's per-head reductions): more synchronization, no
//                   new shared access across warpgroups, and racecheck reports RAW hazards on pub.
// Exit status 0 when the kernels ran (the caller reads racecheck's summary), 2 on a usage error.
#include <cstdio>
#include <cstring>

namespace {

constexpr int kWarpgroupThreads = 128;
constexpr int kBlockThreads = 2 * kWarpgroupThreads + 32;
constexpr int kStats = 48;  // α, Σp, m' of 16 heads

__device__ __forceinline__ void handoff(int owner) {
  __syncwarp();
  if (owner == 0)
    asm volatile("barrier.sync 4, 256;\n" ::: "memory");
  else
    asm volatile("barrier.sync 5, 256;\n" ::: "memory");
}

__device__ __forceinline__ void warpgroup_sync(int warpgroup) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + warpgroup) : "memory");
}

template <bool kLocalBarriers>
__global__ void handoff_kernel(float* out, int tiles) {
  __shared__ float pub[2][kStats];
  __shared__ float local[2][kWarpgroupThreads];
  const int tid = threadIdx.x;
  if (tid >= 2 * kWarpgroupThreads) return;
  const int wg = tid / kWarpgroupThreads, other = 1 - wg, wg_tid = tid % kWarpgroupThreads;
  float acc = 0;
  const auto take_remote = [&](int t) {
    handoff(other);
    acc += pub[other][wg_tid % 16] + pub[other][16 + wg_tid % 16] + static_cast<float>(t);
  };
  for (int t = wg; t < tiles; t += 2) {
    if (t > 0) take_remote(t - 1);
    if (kLocalBarriers) {
      warpgroup_sync(wg);
      local[wg][wg_tid] = acc;
      warpgroup_sync(wg);
      acc += local[wg][(wg_tid + 1) % kWarpgroupThreads];
    }
    if (wg_tid < 4)
      for (int c = 0; c < 4; ++c) {
        pub[wg][wg_tid * 4 + c] = static_cast<float>(t + c);
        pub[wg][16 + wg_tid * 4 + c] = 2.0f * static_cast<float>(t);
      }
    handoff(wg);
    acc += pub[wg][wg_tid % 16];
  }
  if (tiles > 0 && (tiles - 1) % 2 != wg) take_remote(tiles - 1);
  out[blockIdx.x * 2 * kWarpgroupThreads + tid] = acc;
}

}  // namespace

int main(int argc, char** argv) {
  const bool local = argc == 2 && std::strcmp(argv[1], "local-barriers") == 0;
  if (argc != 2 || (!local && std::strcmp(argv[1], "plain") != 0)) {
    std::fprintf(stderr, "usage: %s plain|local-barriers\n", argv[0]);
    return 2;
  }
  constexpr int kBlocks = 4;
  float* out = nullptr;
  if (cudaMalloc(&out, kBlocks * 2 * kWarpgroupThreads * sizeof(float)) != cudaSuccess) return 1;
  for (int tiles : {1, 2, 5, 8}) {
    if (local)
      handoff_kernel<true><<<kBlocks, kBlockThreads>>>(out, tiles);
    else
      handoff_kernel<false><<<kBlocks, kBlockThreads>>>(out, tiles);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("racecheck_handoff_repro %s: %s\n", argv[1], cudaGetErrorString(e));
  cudaFree(out);
  return e == cudaSuccess ? 0 : 1;
}
