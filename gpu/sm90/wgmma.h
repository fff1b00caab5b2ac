#pragma once
// NVIDIA sm_90a's warpgroup matrix multiply (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-
// Accumulate Instructions"): four warps (one warpgroup, 128 threads) compute D (64 x N, float32)
// += A (64 x K) · Bᵀ (N x K), both operands read from shared memory through 64-bit matrix
// descriptors, issued asynchronously and completed by wgmma.commit_group / wait_group. The layer
// the Hopper family (issue 10) is built on; sm_90a only (the "a" features: gpu/CMakeLists.txt
// compiles the files that include this only where CMAKE_CUDA_ARCHITECTURES holds 90a).
//
// Shared-memory layout, no swizzle ("canonical" K-major layout, PTX "Shared Memory Matrix
// Layout"): the operand is cut into core matrices of 8 rows x 16 bytes (8 bf16), each stored as
// 128 contiguous bytes (row r of the core matrix at byte 16 r). Core matrices adjacent in K are
// `leading` bytes apart (LBO), adjacent in M / N `stride` bytes apart (SBO). KMajorLayout below
// places a rows x K operand that way: for each group of 8 rows, its K / 8 core matrices in K order
// (LBO = 128, SBO = K / 8 x 128); a product over k0 .. k0 + 15 starts at byte k0 / 8 x 128.
//
// Accumulator fragments (PTX "Matrix Fragments for wgmma .m64nNk16", float32 D): warp w of the
// warpgroup holds rows 16 w .. 16 w + 15; in each 8-column chunk j a lane holds, as mma.m16n8's
// C fragment does, d[4j], d[4j+1] at row 16 w + g, columns 8 j + 2 t, + 1 and d[4j+2], d[4j+3] at
// row 16 w + g + 8 (g = lane / 4, t = lane % 4).
#include <cstdint>

#include "gpu/platform.h"

#if !defined(__CUDACC__)
#error "gpu/sm90/wgmma.h is NVIDIA device code: include it from the sm_90a sources only"
#endif

namespace mlacheck::gpu::sm90 {

inline constexpr int kWarpgroupThreads = 128;
inline constexpr int kWarpgroupWarps = kWarpgroupThreads / kWarpSize;  // 4: each owns 16 rows of D
inline constexpr int kWgM = 64;   // rows of A and D per warpgroup product
static_assert(kWarpgroupWarps * 16 == kWgM, "a warpgroup is 4 warps of 32 lanes, 16 rows of D each");
inline constexpr int kWgK16 = 16; // K of one 16-bit product
inline constexpr int kCoreRows = 8;
inline constexpr int kCoreBytes = 128;  // 8 rows x 16 bytes

// Byte offset of element (row, k) of a rows x K 16-bit operand in KMajorLayout.
struct KMajorLayout {
  int k;  // the operand's K (a multiple of 8)
  __host__ __device__ constexpr int offset_bytes(int row, int kk) const {
    return (row / kCoreRows) * stride_bytes() + (kk / 8) * kCoreBytes + (row % kCoreRows) * 16 +
           (kk % 8) * 2;
  }
  __host__ __device__ constexpr int leading_bytes() const { return kCoreBytes; }
  __host__ __device__ constexpr int stride_bytes() const { return (k / 8) * kCoreBytes; }
};

// Byte offset of element (k, n) of a 16-bit operand stored MN-major (n contiguous: 8 n values of
// one k make 16 bytes; core matrices of 8 k x 8 n, the n-adjacent ones kCoreBytes apart, the
// k-adjacent ones n_extent / 8 x kCoreBytes apart). As a descriptor: LBO = the k step, SBO = the
// n step (the same roles as DecodeTileLayout's MN-major read).
struct MnMajorLayout {
  int n;  // the operand's N (a multiple of 8)
  __host__ __device__ constexpr int offset_bytes(int kk, int nn) const {
    return (kk / kCoreRows) * leading_bytes() + (nn / 8) * kCoreBytes + (kk % kCoreRows) * 16 +
           (nn % 8) * 2;
  }
  __host__ __device__ constexpr int leading_bytes() const { return (n / 8) * kCoreBytes; }
  __host__ __device__ constexpr int stride_bytes() const { return kCoreBytes; }
};

// The descriptor of a no-swizzle operand at shared address `base` (16-byte aligned): start address,
// LBO and SBO, each in units of 16 bytes (bits 0-13, 16-29, 32-45); base offset 0, swizzle mode 0
// (bits 62-63).
__device__ __forceinline__ uint64_t smem_descriptor(const void* base, uint32_t leading_bytes,
                                                    uint32_t stride_bytes) {
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(base));
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>((leading_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((stride_bytes & 0x3FFFF) >> 4) << 32);
}

// The descriptor of the operand `bytes` further on (16-byte multiple) in the same layout: the start
// address field holds shared address / 16 in 14 bits, and every shared address of a block (< 228 KB)
// fits, so the sum never carries into LBO. Two integer adds instead of smem_descriptor's
// conversion and masks per product (device run 15: the hopper kernel issued 1.8x the mma
// family's instructions per tile).
__device__ __forceinline__ uint64_t descriptor_advance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

// The descriptor of an operand in the 128-byte-swizzle layout (PTX "Shared Memory Matrix Layout",
// swizzle mode 1): rows of 128 bytes whose 16-byte chunks sit at chunk ^ (row % 8), the pattern
// repeating every 8 rows (1024 bytes; the region must be 1024-byte aligned, as the bulk tensor
// copy writes it). K-major (A or B with K contiguous: rows = M / N): SBO = the 8-row step, LBO
// unused; a product over K elements 16 j .. 16 j + 15 of the 64 a row holds starts 32 j bytes in.
// MN-major (M / N contiguous: rows = K): SBO = the step between groups of 8 K rows, LBO the step
// between 64-element spans of M / N (unused where M / N is 64).
__device__ __forceinline__ uint64_t smem_descriptor_sw128(const void* base, uint32_t leading_bytes,
                                                          uint32_t stride_bytes) {
  return smem_descriptor(base, leading_bytes, stride_bytes) | (uint64_t{1} << 62);
}

// A tile of `rows` cache rows x 576 bf16 as the bulk tensor copy lands it with 128-byte swizzle:
// nine boxes of 64 dims, box b a block of rows x 128 bytes at b x rows x 128, dims 64 b + 8 c ..
// + 7 of row r at r x 128 + 16 (c ^ r % 8). Read K-major (rows = M, dims = K) it is Sᵀ = K Qᵀ's
// A operand (and, with 16 rows, Qᵀ's B operand); read MN-major (dims = M, rows = K) the same bytes
// are Oᵀ = Vᵀ Pᵀ's transposed A operand Vᵀ. One tile serves both products without a second copy.
template <int Rows>
struct Swizzle128Tile {
  static_assert(Rows % kCoreRows == 0, "whole 8-row swizzle atoms");
  static constexpr int kBoxDims = 64;
  static constexpr int kBoxes = 576 / kBoxDims;  // 9
  static constexpr int kRowBytes = 128;
  static constexpr int kBoxBytes = Rows * kRowBytes;
  static constexpr int kBytes = kBoxes * kBoxBytes;
  static constexpr int kAtomBytes = kCoreRows * kRowBytes;  // 1024: the swizzle's period
  // Byte of the 16-byte chunk holding dims 8 chunk .. 8 chunk + 7 of `row`.
  __host__ __device__ static constexpr int chunk_offset_bytes(int row, int chunk) {
    return (chunk / 8) * kBoxBytes + row * kRowBytes + 16 * ((chunk % 8) ^ (row % kCoreRows));
  }
  // K-major read (Sᵀ's A, Qᵀ's B): the product over dims k0 .. k0 + 15 (k0 a multiple of 16) of
  // rows 0 .. 63 starts here; SBO = one atom.
  __host__ __device__ static constexpr int k_major_start(int k0) {
    return (k0 / kBoxDims) * kBoxBytes + (k0 % kBoxDims) * 2;
  }
  // MN-major read (Vᵀ): dims m0 .. m0 + 63 (m0 a multiple of 64) and rows k0 .. k0 + 15 (k0 a
  // multiple of 8) start here; SBO = one atom (8 rows), LBO = one box (the next 64 dims).
  __host__ __device__ static constexpr int mn_major_start(int m0, int k0) {
    return (m0 / kBoxDims) * kBoxBytes + k0 * kRowBytes;
  }
  static constexpr int kStride = kAtomBytes, kLeading = kBoxBytes;
  // K-major reads ignore LBO; the descriptor still holds one 16-byte unit there (as CUTLASS's).
  static constexpr int kKMajorLeading = 16;
};

// 64 x 64 float32 accumulator of one warpgroup (layout at the top).
struct WgTileC64x64 {
  static constexpr int kN = 64;
  static constexpr int ne = kN / 2;  // 32 floats per thread
  float x[ne];
  static __device__ __forceinline__ int get_i(int l) {
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    const int warp = static_cast<int>(threadIdx.x) / kWarpSize % kWarpgroupWarps;
    return 16 * warp + lane / 4 + 8 * ((l / 2) % 2);
  }
  static __device__ __forceinline__ int get_j(int l) {
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    return 8 * (l / 4) + 2 * (lane % 4) + l % 2;
  }
};

// 64 x 16 float32 accumulator (N = 16: the 16 query heads of MLA as the product's columns).
struct WgTileC64x16 {
  static constexpr int kN = 16;
  static constexpr int ne = kN / 2;  // 8 floats per thread
  float x[ne];
  static __device__ __forceinline__ int get_i(int l) { return WgTileC64x64::get_i(l); }
  static __device__ __forceinline__ int get_j(int l) { return WgTileC64x64::get_j(l); }
};

// A decode tile of `rows` cache rows x 576 bf16 in shared memory as the two products read it,
// without a second copy: 16-byte chunk c (dims 8c .. 8c+7) of row r at byte
//   (r / 8) x (72 x 128) + c x 128 + (r % 8) x 16,
// i.e. each group of 8 rows holds its 72 core matrices in dim order. Read K-major (rows = M, dims
// = K: LBO = 128, SBO = 72 x 128) it is the A operand of Sᵀ = K Qᵀ; read MN-major (dims = M, rows =
// K: the same bytes with LBO = 72 x 128, SBO = 128, transpose-A) it is the A operand Vᵀ of
// Oᵀ = Vᵀ Pᵀ. A 16-byte copy per chunk (cp.async) fills it from cache rows of any page layout.
struct DecodeTileLayout {
  static constexpr int kChunks = 72;  // 576 bf16 / 8
  static constexpr int kGroupBytes = kChunks * kCoreBytes;
  __host__ __device__ static constexpr int chunk_offset_bytes(int row, int chunk) {
    return (row / kCoreRows) * kGroupBytes + chunk * kCoreBytes + (row % kCoreRows) * 16;
  }
  // Sᵀ's A operand for dims k0 .. k0 + 15 of rows r0 .. r0 + 63.
  __host__ __device__ static constexpr int k_major_start(int r0, int k0) {
    return (r0 / kCoreRows) * kGroupBytes + (k0 / 8) * kCoreBytes;
  }
  static constexpr int kKMajorLeading = kCoreBytes, kKMajorStride = kGroupBytes;
  // Oᵀ's A operand Vᵀ for dims m0 .. m0 + 63 and rows (keys) k0 .. k0 + 15.
  __host__ __device__ static constexpr int mn_major_start(int m0, int k0) {
    return (k0 / kCoreRows) * kGroupBytes + (m0 / 8) * kCoreBytes;
  }
  static constexpr int kMnMajorLeading = kGroupBytes, kMnMajorStride = kCoreBytes;
};

// Orders this thread's earlier register writes to the accumulator before the next wgmma reads it.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// Pins an accumulator's registers at this point of the program: an empty asm that reads and writes
// each one, so that the compiler moves no computation of them across it. Called after the
// accumulator's last ordinary write before wgmma_fence, and right after the wgmma_wait that
// completes it: without it the compiler sank the α scaling of Oᵀ's chunks between the products,
// and ptxas serialized every wgmma of the kernel around its own injected arrives (its C7520 note).
template <class Tile>
__device__ __forceinline__ void wgmma_fence_operand(Tile& d) {
#pragma unroll
  for (int i = 0; i < Tile::ne; ++i) asm volatile("" : "+f"(d.x[i])::"memory");
}
// Closes the group of wgmmas issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most `Pending` committed groups are in flight; their accumulators are then valid.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// D (+)= A · Bᵀ over one K step of 16: A 64 x 16 and B 64 x 16 bf16 through their descriptors;
// accumulate = false overwrites D. Every thread of the warpgroup calls it with the same
// descriptors.
__device__ __forceinline__ void wgmma_bf16_m64n64k16(WgTileC64x64& d, uint64_t desc_a,
                                                     uint64_t desc_b, bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float* x = d.x;
  asm volatile(
      "{\n .reg .pred acc;\n setp.ne.b32 acc, %34, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, acc, 1, 1, 0, 0;\n}\n"
      : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3]), "+f"(x[4]), "+f"(x[5]), "+f"(x[6]),
        "+f"(x[7]), "+f"(x[8]), "+f"(x[9]), "+f"(x[10]), "+f"(x[11]), "+f"(x[12]), "+f"(x[13]),
        "+f"(x[14]), "+f"(x[15]), "+f"(x[16]), "+f"(x[17]), "+f"(x[18]), "+f"(x[19]),
        "+f"(x[20]), "+f"(x[21]), "+f"(x[22]), "+f"(x[23]), "+f"(x[24]), "+f"(x[25]),
        "+f"(x[26]), "+f"(x[27]), "+f"(x[28]), "+f"(x[29]), "+f"(x[30]), "+f"(x[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate ? 1 : 0));
#else
  (void)d;
  (void)desc_a;
  (void)desc_b;
  (void)accumulate;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// The 16-bit operand type of a product: both operands bf16, or both f16 (the Hopper family's
// all-fp8 recipes, whose e4m3 values are f16 values: gpu/hopper/attention.hip).
enum class WgOperand { bf16, f16 };

// D (+)= A · Bᵀ over one K step of 16 with N = 16: A 64 x 16 (K-major, or with TransposeA its
// transpose stored MN-major), B 16 x 16 (K-major, or with TransposeB stored MN-major), bf16 or f16.
template <bool TransposeA, bool TransposeB = false, WgOperand T = WgOperand::bf16>
__device__ __forceinline__ void wgmma_m64n16k16(WgTileC64x16& d, uint64_t desc_a, uint64_t desc_b,
                                                bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float* x = d.x;
// One product's asm for operand type TYPE (a string literal: "bf16", "f16"); the two types differ in
// the instruction's name only.
#define MLACHECK_WGMMA_M64N16K16_SS(TYPE)                                                           \
  asm volatile("{\n .reg .pred acc;\n setp.ne.b32 acc, %10, 0;\n"                                 \
               " wgmma.mma_async.sync.aligned.m64n16k16.f32." TYPE "." TYPE " "                     \
               "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, acc, 1, 1, %11, %12;\n}\n"              \
               : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3]), "+f"(x[4]), "+f"(x[5]), "+f"(x[6]), \
                 "+f"(x[7])                                                                        \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate ? 1 : 0), "n"(TransposeA ? 1 : 0),       \
                 "n"(TransposeB ? 1 : 0))
  if constexpr (T == WgOperand::bf16) MLACHECK_WGMMA_M64N16K16_SS("bf16");
  else MLACHECK_WGMMA_M64N16K16_SS("f16");
#undef MLACHECK_WGMMA_M64N16K16_SS
#else
  (void)d;
  (void)desc_a;
  (void)desc_b;
  (void)accumulate;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// D (+)= A · Bᵀ over one K step of 16 with N = 32, bf16: A 64 x 16 and B 32 x 16 (K-major, or with
// TransposeA / TransposeB stored MN-major). D's 16 floats a thread are two 64 x 16 tiles side by
// side: `lo` columns 0 .. 15, `hi` columns 16 .. 31 (the accumulator layout's element l lies in
// column 8 (l / 4) + 2 t + l % 2, so elements 8 .. 15 are the second tile's 0 .. 7). One product
// reads its A once for both halves (the Hopper kernel's two packed query tokens).
template <bool TransposeA, bool TransposeB = false>
__device__ __forceinline__ void wgmma_m64n32k16(WgTileC64x16& lo, WgTileC64x16& hi, uint64_t desc_a,
                                                uint64_t desc_b, bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float* x = lo.x;
  float* y = hi.x;
  asm volatile(
      "{\n .reg .pred acc;\n setp.ne.b32 acc, %18, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, acc, 1, 1, %19, %20;\n}\n"
      : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3]), "+f"(x[4]), "+f"(x[5]), "+f"(x[6]), "+f"(x[7]),
        "+f"(y[0]), "+f"(y[1]), "+f"(y[2]), "+f"(y[3]), "+f"(y[4]), "+f"(y[5]), "+f"(y[6]), "+f"(y[7])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate ? 1 : 0), "n"(TransposeA ? 1 : 0), "n"(TransposeB ? 1 : 0));
#else
  (void)lo;
  (void)hi;
  (void)desc_a;
  (void)desc_b;
  (void)accumulate;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// An 8-bit operand (e4m3) in the canonical K-major layout: core matrices of 8 rows x 16 bytes (16
// elements), the K-adjacent ones kCoreBytes apart (LBO), the row groups K / 16 x kCoreBytes apart
// (SBO); a product over k0 .. k0 + 31 starts at byte k0 / 16 x kCoreBytes.
inline constexpr int kWgK32 = 32;  // K of one 8-bit product
struct KMajorLayout8 {
  int k;  // the operand's K (a multiple of 16)
  __host__ __device__ constexpr int offset_bytes(int row, int kk) const {
    return (row / kCoreRows) * stride_bytes() + (kk / 16) * kCoreBytes + (row % kCoreRows) * 16 + kk % 16;
  }
  __host__ __device__ constexpr int leading_bytes() const { return kCoreBytes; }
  __host__ __device__ constexpr int stride_bytes() const { return (k / 16) * kCoreBytes; }
};

// D (+)= A · Bᵀ over one K step of 32 with N = 16, both operands e4m3 (e4m3fn codes) read K-major
// from shared memory: PTX has no transposed form for 8-bit operands, so A (64 x 32) and B (16 x 32)
// must each hold K contiguous. Not used by a kernel yet: the layer for an e4m3 P·V (issue 10),
// checked by tests/gpu/wgmma_test.cpp, including how many bits its accumulation keeps.
__device__ __forceinline__ void wgmma_m64n16k32_e4m3(WgTileC64x16& d, uint64_t desc_a, uint64_t desc_b,
                                                     bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float* x = d.x;
  asm volatile("{\n .reg .pred acc;\n setp.ne.b32 acc, %10, 0;\n"
               " wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, acc, 1, 1;\n}\n"
               : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3]), "+f"(x[4]), "+f"(x[5]), "+f"(x[6]), "+f"(x[7])
               : "l"(desc_a), "l"(desc_b), "r"(accumulate ? 1 : 0));
#else
  (void)d;
  (void)desc_a;
  (void)desc_b;
  (void)accumulate;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// A 64 x 16 A operand of 16-bit values (bf16 or f16) in registers (PTX "Register fragment for
// matrix A" of wgmma .m64nNk16, the layout of mma.m16n8k16's A per warp): warp w of the warpgroup
// holds rows 16 w .. 16 w + 15; with g = lane / 4, t = lane % 4, register 0 holds (row 16 w + g,
// columns 2 t, 2 t + 1), register 1 (row + 8, the same columns), register 2 (row, columns 2 t + 8,
// 2 t + 9), register 3 (row + 8, those columns), low column in the low half.
struct WgFragA64x16 {
  static constexpr int ne = 4;
  uint32_t x[ne];
};
// Pins the registers of an A fragment at this point of the program (as wgmma_fence_operand does
// the accumulators'): a wgmma reads them asynchronously, so they must keep their values until a
// wgmma_wait retires it; an empty asm that reads and writes them after that wait keeps the compiler
// from reusing them before it.
__device__ __forceinline__ void wgmma_fence_fragment(WgFragA64x16& a) {
#pragma unroll
  for (int i = 0; i < WgFragA64x16::ne; ++i) asm volatile("" : "+r"(a.x[i])::"memory");
}

// D (+)= A · Bᵀ over one K step of 16 with N = 16, A from registers (WgFragA64x16), B 16 x 16
// K-major in shared memory, both bf16 or both f16. The registers must have been written before a
// wgmma_fence.
template <WgOperand T = WgOperand::bf16>
__device__ __forceinline__ void wgmma_m64n16k16_rs(WgTileC64x16& d, const WgFragA64x16& a, uint64_t desc_b,
                                                   bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float* x = d.x;
#define MLACHECK_WGMMA_M64N16K16_RS(TYPE)                                                           \
  asm volatile("{\n .reg .pred acc;\n setp.ne.b32 acc, %13, 0;\n"                                 \
               " wgmma.mma_async.sync.aligned.m64n16k16.f32." TYPE "." TYPE " "                     \
               "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, acc, 1, 1, 0;\n}\n"    \
               : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3]), "+f"(x[4]), "+f"(x[5]), "+f"(x[6]), \
                 "+f"(x[7])                                                                        \
               : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "l"(desc_b), "r"(accumulate ? 1 : 0))
  if constexpr (T == WgOperand::bf16) MLACHECK_WGMMA_M64N16K16_RS("bf16");
  else MLACHECK_WGMMA_M64N16K16_RS("f16");
#undef MLACHECK_WGMMA_M64N16K16_RS
#else
  (void)d;
  (void)a;
  (void)desc_b;
  (void)accumulate;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// A 64 x 32 A operand of e4m3 codes in registers (PTX "Register fragment for matrix A" of wgmma
// .m64nNk32 with 8-bit types, the layout of mma.m16n8k32's A per warp): warp w holds rows 16 w ..
// 16 w + 15; with g = lane / 4, t = lane % 4, register 0 holds (row 16 w + g, columns 4 t .. 4 t + 3),
// register 1 (row + 8, the same columns), register 2 (row, columns 16 + 4 t .. 16 + 4 t + 3),
// register 3 (row + 8, those columns), the lowest column in the lowest byte.
using WgFragA64x32e4m3 = WgFragA64x16;  // four registers, as the 16-bit fragment

// D (+)= A · Bᵀ over one K step of 32 with N = 16, e4m3 operands: A from registers
// (WgFragA64x32e4m3), B 16 x 32 K-major in shared memory (KMajorLayout8). The registers must have
// been written before a wgmma_fence and kept until a wgmma_wait retires the product.
__device__ __forceinline__ void wgmma_m64n16k32_e4m3_rs(WgTileC64x16& d, const WgFragA64x32e4m3& a, uint64_t desc_b,
                                                        bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float* x = d.x;
  asm volatile("{\n .reg .pred acc;\n setp.ne.b32 acc, %13, 0;\n"
               " wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, acc, 1, 1;\n}\n"
               : "+f"(x[0]), "+f"(x[1]), "+f"(x[2]), "+f"(x[3]), "+f"(x[4]), "+f"(x[5]), "+f"(x[6]), "+f"(x[7])
               : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "l"(desc_b), "r"(accumulate ? 1 : 0));
#else
  (void)d;
  (void)a;
  (void)desc_b;
  (void)accumulate;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

// Four 8 x 8 matrices of 16-bit elements stored transposed, one stmatrix .x4 .trans: register i of
// each lane holds elements (lane / 4, 2 (lane % 4)) and (lane / 4, 2 (lane % 4) + 1) of matrix i, low
// half first; the 16-byte memory row whose shared address lane 8 i + r gives receives column r of
// matrix i, its 8 elements in row order.
__device__ __forceinline__ void stmatrix_trans_x4(uint32_t row_address, uint32_t m0, uint32_t m1, uint32_t m2,
                                                  uint32_t m3) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(row_address),
               "r"(m0), "r"(m1), "r"(m2), "r"(m3)
               : "memory");
#else
  (void)row_address;
  (void)m0;
  (void)m1;
  (void)m2;
  (void)m3;
  __trap();  // compiled for sm_90a only (gpu/CMakeLists.txt)
#endif
}

}  // namespace mlacheck::gpu::sm90
