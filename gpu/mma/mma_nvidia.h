#pragma once
// NVIDIA implementation of gpu/mma/mma.h: warp-level mma.sync (PTX ISA "Warp-level matrix
// multiply-accumulate instructions"), ldmatrix for the operand loads and cp.async for the
// global -> shared copies. Needs sm_80 (bf16 / f16 mma, ldmatrix, cp.async); the e4m3 mma needs
// sm_89, the bulk copies sm_90. Operand decoding (e4m3 / E2M1 -> 16-bit) is
// gpu/common/operand_decode.h. Fragment layouts are PTX's "Matrix Fragments for
// mma.m16n8k16" and "mma.m16n8k32" tables; the ldmatrix address patterns below produce them.
#include <cstdint>

#include "gpu/platform.h"
#include "quant/bits.h"

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

// --- bulk copies completed by an mbarrier (sm_90's copy engine) ---------------------------------
// PTX ISA "cp.async.bulk" and "mbarrier": one thread asks the copy engine for `bytes` contiguous
// bytes (a multiple of 16, both addresses 16-byte aligned: cache rows are 1152, 576 and 288 bytes),
// and the copy, when it lands, counts its bytes off the barrier's transaction count; the threads
// that read the data wait on the barrier's phase. No thread stages anything in registers, and the
// copy engine works while the warps compute.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
inline constexpr bool kHasBulkCopy = true;
#else
inline constexpr bool kHasBulkCopy = false;
#endif

// A barrier word in shared memory, 8-byte aligned.
using BulkBarrier = uint64_t;

// One thread, before any use: `arrivals` threads arrive per phase (1: the thread that announces the
// bytes). A block barrier after it makes the initialised word visible to the others.
__device__ __forceinline__ void bulk_barrier_init(BulkBarrier* bar, int arrivals) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(shared_address(bar)), "r"(arrivals));
  asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory");
#else
  __trap();  // kHasBulkCopy is false: callers branch on it
#endif
}

// This thread's arrival for the current phase, announcing `bytes` more to land before it completes.
__device__ __forceinline__ void bulk_barrier_expect(BulkBarrier* bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
               : : "r"(shared_address(bar)), "r"(bytes) : "memory");
#else
  __trap();
#endif
}

// `bytes` from global `src` to shared `dst`, completing on `bar` (the phase that was announced).
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, uint32_t bytes, BulkBarrier* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      : : "r"(shared_address(dst)), "l"(src), "r"(bytes), "r"(shared_address(bar)) : "memory");
#else
  __trap();
#endif
}

// This thread's plain arrival for the current phase (no bytes announced): a reader saying that it
// is done with the data of this phase, on a barrier initialised with one arrival per reader.
__device__ __forceinline__ void bulk_barrier_arrive(BulkBarrier* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" : : "r"(shared_address(bar)) : "memory");
#else
  __trap();
#endif
}

// Waits until the barrier's phase of parity `phase` (0, 1, 0, ... for its successive phases) has
// completed: every arrival made and every announced byte landed, and visible to this thread.
__device__ __forceinline__ void bulk_barrier_wait(BulkBarrier* bar, uint32_t phase) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .pred done;\n wait:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait;\n}\n"
      : : "r"(shared_address(bar)), "r"(phase) : "memory");
#else
  __trap();
#endif
}

}  // namespace mlacheck::gpu::mma
