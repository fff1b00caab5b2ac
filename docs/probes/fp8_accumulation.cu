// How sm_90's e4m3 warpgroup product accumulates (issue 10: what the gate must allow for branch
// e4m3-merge's e4m3 products, and what an emulation of them must replay). One warpgroup per trial
// runs D = C + A·Bᵀ by one wgmma.m64n16k32.f32.e4m3.e4m3 (both operands K-major in shared memory,
// C loaded); the trials' A, B, C and D go to $OUT/fp8acc.bin, and docs/probes/fp8_accumulation_fit.py
// fits examples/fp8_tensorcore.py's model to them on the CPU. A measurement, not part of the build:
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. docs/probes/fp8_accumulation.cu -o fp8acc
//   OUT=. ./fp8acc && python docs/probes/fp8_accumulation_fit.py fp8acc.bin
// Ran 2026-12-05 on an H100 (512 trials) and an H200 (these 640): ref/fp8_mma.h's kSm90Fp8Mma
// reproduces all 524 288 and 655 360 outputs bit for bit (docs/PERF.md, tenth session's runs).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>
#include "gpu/sm90/wgmma.h"
using namespace mlacheck::gpu;
constexpr int kK = 32;
__global__ void trial(const uint8_t* a, const uint8_t* b, const float* c, float* d) {
  __shared__ alignas(128) uint8_t sa[64 * kK];
  __shared__ alignas(128) uint8_t sb[16 * kK];
  const int t = threadIdx.x;
  const sm90::KMajorLayout8 lay{kK};
  const uint8_t* at = a + blockIdx.x * 64 * kK;
  const uint8_t* bt = b + blockIdx.x * 16 * kK;
  for (int i = t; i < 64 * kK; i += 128) sa[lay.offset_bytes(i / kK, i % kK)] = at[i];
  for (int i = t; i < 16 * kK; i += 128) sb[lay.offset_bytes(i / kK, i % kK)] = bt[i];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  sm90::WgTileC64x16 acc;
  for (int l = 0; l < 8; ++l) acc.x[l] = c[blockIdx.x * 1024 + sm90::WgTileC64x16::get_i(l) * 16 + sm90::WgTileC64x16::get_j(l)];
  sm90::wgmma_fence_operand(acc);
  sm90::wgmma_fence();
  sm90::wgmma_m64n16k32_e4m3(acc, sm90::smem_descriptor(sa, lay.leading_bytes(), lay.stride_bytes()),
                             sm90::smem_descriptor(sb, lay.leading_bytes(), lay.stride_bytes()), true);
  sm90::wgmma_commit();
  sm90::wgmma_wait<0>();
  sm90::wgmma_fence_operand(acc);
  for (int l = 0; l < 8; ++l) d[blockIdx.x * 1024 + sm90::WgTileC64x16::get_i(l) * 16 + sm90::WgTileC64x16::get_j(l)] = acc.x[l];
}
int main() {
  // Trials 0 .. 511 spread the exponents; 512 .. 639 hold subnormal factors (exponent field 0), so
  // that a product with one is often the largest of its K step: which exponent aligns it.
  constexpr int kSpreadTrials = 512, kTrials = 640;
  std::mt19937 rng(20261204u);
  std::vector<uint8_t> a(kTrials * 64 * kK), b(kTrials * 16 * kK);
  std::vector<float> c(kTrials * 1024), d(kTrials * 1024);
  auto code = [&](uint32_t lo, uint32_t hi) {  // a non-NaN code, exponent field in lo .. hi
    for (;;) {
      uint32_t s = rng() & 1u, e = lo + rng() % (hi - lo + 1), m = rng() & 7u;
      if (rng() % 8 == 0) return uint8_t(0);  // zeros
      uint8_t x = uint8_t((s << 7) | (e << 3) | m);
      if ((x & 0x7F) != 0x7F) return x;
    }
  };
  for (int t = 0; t < kTrials; ++t) {
    const int spread = t % 10;  // 0 .. 9: from one binade to every exponent
    const uint32_t lo = spread >= 8 ? 0u : 7u - spread, hi = spread >= 8 ? 15u : 7u + spread;
    const bool tiny = t >= kSpreadTrials;  // A's fields 0 .. 1 and B's 0 .. 15, or both 0 .. 2
    const uint32_t a_hi = tiny ? (t % 2 ? 1u : 2u) : hi, b_hi = tiny ? (t % 2 ? 15u : 2u) : hi;
    for (int i = 0; i < 64 * kK; ++i) a[t * 64 * kK + i] = code(tiny ? 0u : lo, a_hi);
    for (int i = 0; i < 16 * kK; ++i) b[t * 16 * kK + i] = code(tiny ? 0u : lo, b_hi);
    const int cmode = t / 10 % 4;  // C: 0, small, comparable, large against the products
    for (int i = 0; i < 1024; ++i) {
      float x = 0.f;
      if (cmode > 0) {
        const int e = (cmode == 1 ? -20 : cmode == 2 ? 0 : 20) + int(rng() % 9) - 4;
        x = std::ldexp(1.0f + float(rng() & 0x7FFFFF) / 8388608.0f, e) * ((rng() & 1) ? -1.f : 1.f);
      }
      c[t * 1024 + i] = x;
    }
  }
  uint8_t *da, *db; float *dc, *dd;
  cudaMalloc(&da, a.size()); cudaMalloc(&db, b.size()); cudaMalloc(&dc, c.size() * 4); cudaMalloc(&dd, d.size() * 4);
  cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice);
  trial<<<kTrials, 128>>>(da, db, dc, dd);
  const cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
  const char* out = getenv("OUT");
  std::string path = std::string(out ? out : ".") + "/fp8acc.bin";
  FILE* f = fopen(path.c_str(), "wb");
  const int32_t hdr[3] = {kTrials, kK, 0};
  fwrite(hdr, 4, 3, f); fwrite(a.data(), 1, a.size(), f); fwrite(b.data(), 1, b.size(), f);
  fwrite(c.data(), 4, c.size(), f); fwrite(d.data(), 4, d.size(), f); fclose(f);
  printf("%d trials -> %s (%s)\n", kTrials, path.c_str(), cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
