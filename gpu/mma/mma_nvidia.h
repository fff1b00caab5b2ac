#pragma once
// NVIDIA implementation of gpu/mma/mma.h: warp-level mma.sync (PTX ISA "Warp-level matrix
// multiply-accumulate instructions"), ldmatrix for the operand loads and cp.async for the
// global -> shared copies. Needs sm_80 (bf16 / f16 mma, ldmatrix, cp.async); the e4m3 mma and the
// e4m3 -> f16 conversion need sm_89. Fragment layouts are PTX's "Matrix Fragments for
// mma.m16n8k16" and "mma.m16n8k32" tables; the ldmatrix address patterns below produce them.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/portable/rounding.h"
#include "quant/bits.h"
#include "quant/fp8.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "gpu/mma: NVIDIA code needs sm_80 or newer (mma.sync bf16, ldmatrix, cp.async)"
#endif

namespace mlacheck::gpu::mma {

inline constexpr int kM = 16;   // rows of A and C
inline constexpr int kN = 8;    // rows of B = columns of C (m16n8kK)
inline constexpr int kK16 = 16; // K of one 16-bit product
inline constexpr int kK8 = 32;  // K of one e4m3 product
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
inline constexpr bool kHasFp8Mma = true;
#else
inline constexpr bool kHasFp8Mma = false;
#endif
inline constexpr bool kHasScaledMma = false;  // block-scaled mma is sm_100's (tcgen05), not sm_90's

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }

// Operands: opaque registers filled by the loads (ldmatrix's layout is the mma's).
struct TileA16 { uint32_t x[4]; };  // 16 x 16 of 16-bit values
struct TileB16 { uint32_t x[2]; };  //  8 x 16
struct TileA8 { uint32_t x[4]; };   // 16 x 32 e4m3 codes
struct TileB8 { uint32_t x[2]; };   //  8 x 32

// 16 x 8 float accumulator: c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row g + 8 (g = lane / 4,
// t = lane % 4).
struct TileC {
  static constexpr int ne = 4;
  float x[ne] = {0.0f, 0.0f, 0.0f, 0.0f};
  static __device__ __forceinline__ int get_i(int l) { return lane_id() / 4 + 8 * (l / 2); }
  static __device__ __forceinline__ int get_j(int l) { return 2 * (lane_id() % 4) + l % 2; }
};

// Two float32 values that are bf16 values, as a bf16 pair (low half = first); exact.
__device__ __forceinline__ uint32_t pack_pair(float first, float second) {
  return (quant::f32_bits(first) >> 16) | (quant::f32_bits(second) & 0xFFFF0000u);
}

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A (16 x 16): matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) from lanes
// 0-7, 8-15, 16-23, 24-31: lane l gives row l % 16, column 8 (l / 16).
__device__ __forceinline__ void load_a16(TileA16& a, const uint16_t* base, int stride) {
  const int l = lane_id();
  const uint16_t* p = base + (l % 16) * stride + (l / 16) * 8;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a.x[0]), "=r"(a.x[1]), "=r"(a.x[2]), "=r"(a.x[3])
               : "r"(shared_address(p)));
}

// B (8 x 16): matrices (rows 0-7, k 0-7), (0-7, 8-15) from lanes 0-7, 8-15 (the other lanes'
// addresses are read but unused, so they repeat the first half's).
__device__ __forceinline__ void load_b16(TileB16& b, const uint16_t* base, int stride) {
  const int l = lane_id() % 16;
  const uint16_t* p = base + (l % 8) * stride + (l / 8) * 8;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(b.x[0]), "=r"(b.x[1])
               : "r"(shared_address(p)));
}

// B (8 x 16) = the transpose of a 16 x 8 block of a K x N row-major array (V as [key][dim]):
// ldmatrix .trans of (k 0-7) and (k 8-15), rows given by lanes 0-15.
__device__ __forceinline__ void load_b16_trans(TileB16& b, const uint16_t* base, int stride) {
  const int l = lane_id() % 16;
  const uint16_t* p = base + l * stride;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(b.x[0]), "=r"(b.x[1])
               : "r"(shared_address(p)));
}

// e4m3 operands: a row of 32 codes is 16 ldmatrix b16 columns, and the m16n8k32 fragments (lane
// holds codes 4t..4t+3 of row g, then +8 rows, +16 columns) are exactly the b16 ones above.
__device__ __forceinline__ void load_a8(TileA8& a, const uint8_t* base, int stride) {
  const int l = lane_id();
  const uint8_t* p = base + (l % 16) * stride + (l / 16) * 16;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a.x[0]), "=r"(a.x[1]), "=r"(a.x[2]), "=r"(a.x[3])
               : "r"(shared_address(p)));
}
__device__ __forceinline__ void load_b8(TileB8& b, const uint8_t* base, int stride) {
  const int l = lane_id() % 16;
  const uint8_t* p = base + (l % 8) * stride + (l / 8) * 16;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(b.x[0]), "=r"(b.x[1])
               : "r"(shared_address(p)));
}

// D = A · Bᵀ + D, float32 accumulation.
__device__ __forceinline__ void mma_bf16(TileC& d, const TileA16& a, const TileB16& b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d.x[0]), "+f"(d.x[1]), "+f"(d.x[2]), "+f"(d.x[3])
      : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]));
}
__device__ __forceinline__ void mma_f16(TileC& d, const TileA16& a, const TileB16& b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d.x[0]), "+f"(d.x[1]), "+f"(d.x[2]), "+f"(d.x[3])
      : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]));
}
__device__ __forceinline__ void mma_e4m3(TileC& d, const TileA8& a, const TileB8& b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d.x[0]), "+f"(d.x[1]), "+f"(d.x[2]), "+f"(d.x[3])
      : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]));
#else
  __trap();  // kHasFp8Mma is false: callers branch on it
#endif
}

// Two e4m3fn codes (low byte = first) as an f16 pair (low half = first), exactly: every e4m3fn
// value is an f16 value (3 mantissa bits, exponents 2^-9 .. 2^8), NaN stays NaN. sm_89's
// cvt.rn.f16x2.e4m3x2 does both in one instruction; before sm_89, the codec.
__device__ __forceinline__ uint32_t e4m3fn_pair_to_f16_pair(uint16_t codes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t halves;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(halves) : "h"(codes));
  return halves;
#else
  const auto f16 = [](uint8_t c) -> uint32_t {
    return portable::f16_bits(quant::fp8_to_f32(c, quant::Fp8Format::e4m3fn));
  };
  return f16(static_cast<uint8_t>(codes)) | (f16(static_cast<uint8_t>(codes >> 8)) << 16);
#endif
}

// The same two codes as a bf16 pair (e4m3 values are bf16 values too): f16 -> f32 -> bf16, exact.
__device__ __forceinline__ uint32_t e4m3fn_pair_to_bf16_pair(uint16_t codes) {
  const uint32_t halves = e4m3fn_pair_to_f16_pair(codes);
  float lo, hi;
  asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n"
      : "=f"(lo), "=f"(hi)
      : "r"(halves));
  return pack_pair(lo, hi);
}

// --- global -> shared copies ---------------------------------------------------------------------
// 16 bytes from `src` (16-byte aligned) to `dst` (shared, 16-byte aligned); with valid = false the
// destination is zero-filled and nothing is read (cp.async's src-size 0).
__device__ __forceinline__ void async_copy_16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :
               : "r"(shared_address(dst)), "l"(src), "r"(valid ? 16 : 0));
}
// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n"); }
// Waits until at most `Pending` committed groups are still in flight (this thread's copies; a block
// barrier after it makes every thread's copies visible).
template <int Pending>
__device__ __forceinline__ void async_wait() {
  asm volatile("cp.async.wait_group %0;\n" : : "n"(Pending));
}

}  // namespace mlacheck::gpu::mma
