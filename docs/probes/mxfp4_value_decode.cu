// A static-count probe, not built by CMake and not part of mlacheck (docs/HOPPER.md, MXFP4): the
// decode that P·V with Vᵀ as wgmma's register A operand, decoded straight from MXFP4 codes, would
// need per consumer thread and 64-key tile: 4 K steps x the fragment's keys {2t, 2t+1, 2t+8, 2t+9}
// x this thread's 8 value dims (one code word per key, the dims permuted to be consecutive), each key
// with its own block scale, through gpu/common/operand_decode.h's table lookups (its octet decode with
// a scale pair: the pair's two halves are two keys). Count it (docs/PERF.md, 2026-12-05):
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. -c docs/probes/mxfp4_value_decode.cu -o full.o
//   nvcc ... -DPROBE_LOADS_ONLY ... -o loads.o    (the same loads, no decode)
//   cuobjdump -sass full.o / loads.o, count the instruction lines, subtract.
#include <cstdint>
#include "gpu/common/operand_decode.h"
using namespace mlacheck::gpu::common;
// gpu/common/operand_decode.h's mxfp4_octet_to_bf16_pairs with a scale pair (the pair's halves are
// two keys, each with its block scale) where it takes one scale: a copy, not a product function
// that only this probe would call.
__device__ __forceinline__ void octet_two_scales(uint32_t codes, uint32_t scale_pair, uint32_t (&out)[4]) {
  const uint32_t mag = codes & 0x77777777u;
  uint32_t sel[2], sign[2];
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(sel[0]) : "r"(kMxfp4SelectorsLow), "r"(kMxfp4SelectorsHigh), "r"(mag));
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(sel[1]) : "r"(kMxfp4SelectorsLow), "r"(kMxfp4SelectorsHigh), "r"(mag >> 16));
  asm("prmt.b32 %0, %1, %1, %2;\n" : "=r"(sign[0]) : "r"(0x80808080u), "r"(codes));
  asm("prmt.b32 %0, %1, %1, %2;\n" : "=r"(sign[1]) : "r"(0x80808080u), "r"(codes >> 16));
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t both = sel[h] | (sign[h] & 0x40404040u);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      uint32_t pair;
      asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(pair) : "r"(kMxfp4BytesLow), "r"(kMxfp4BytesHigh), "r"(both >> (16 * k)));
      asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(out[2 * h + k]) : "r"(pair), "r"(scale_pair));
    }
  }
}
__global__ void vdec(const uint32_t* __restrict__ g, uint32_t* out) {
  extern __shared__ unsigned char smem[];  // a part's codes (288-byte rows) then its scales (18 a row)
  const int tid = threadIdx.x, lane = tid % 32, t = lane % 4;
  const int group = tid / 4;  // this thread's 8 dims: word `group` of 64 per 256-byte code row
  for (int i = tid; i < 64 * 72 + 300; i += blockDim.x) reinterpret_cast<uint32_t*>(smem)[i] = g[i];
  __syncthreads();
  uint32_t acc = 0;
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    uint32_t w[4], sc[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int key = 16 * s + 2 * t + (k & 1) + 8 * (k >> 1);
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w[k]) : "r"((uint32_t)__cvta_generic_to_shared(smem + key * 288 + 4 * group)));
      asm volatile("ld.shared.u8 %0, [%1];" : "=r"(sc[k]) : "r"((uint32_t)__cvta_generic_to_shared(smem + 64 * 288 + key * 18 + group / 4)));
    }
#if defined(PROBE_LOADS_ONLY)
#pragma unroll
    for (int k = 0; k < 4; ++k) acc ^= w[k] + sc[k];
#else
#pragma unroll
    for (int pr = 0; pr < 2; ++pr) {  // keys (2t, 2t+1) then (2t+8, 2t+9): the A fragment's pairs
      const uint32_t a = w[2 * pr], b = w[2 * pr + 1];
      const uint32_t even = (a & 0x0F0F0F0Fu) | ((b << 4) & 0xF0F0F0F0u);  // dims 0, 2, 4, 6: (a, b) nibbles
      const uint32_t odd = ((a >> 4) & 0x0F0F0F0Fu) | (b & 0xF0F0F0F0u);   // dims 1, 3, 5, 7
      const uint32_t scale_pair = mxfp4_scale_bf16(sc[2 * pr]) | (mxfp4_scale_bf16(sc[2 * pr + 1]) << 16);
      uint32_t r0[4], r1[4];
      octet_two_scales(even, scale_pair, r0);
      octet_two_scales(odd, scale_pair, r1);
#pragma unroll
      for (int k = 0; k < 4; ++k) acc ^= r0[k] + r1[k];  // stand-in for the fragments' consumer
    }
#endif
  }
  out[blockIdx.x * blockDim.x + tid] = acc;
}
