#pragma once
// AMD implementation of gpu/mma/mma.h: CDNA (gfx9, wave64) MFMA 16x16xK through clang's
// __builtin_amdgcn_mfma_* builtins, for gfx90a (MI250X), gfx942 (MI300X) and gfx950 (MI355X).
//
// Fragment layouts (lane = 0..63, v = register / element index inside the lane). Sources: the AMD
// Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator, "Register to matrix
// element mapping", e.g. v_mfma_f32_16x16x32_fp8_fp8 on CDNA3), the CDNA3 / CDNA4 ISA guides
// ("Matrix Arithmetic Instructions") and AMD's blog "Matrix Core Programming on AMD CDNA3 and
// CDNA4" (f16 16x16x16 example; E2M1 operands of the scaled MFMA: 32 contiguous codes and one
// E8M0 scale per lane).
//   16-bit A (16 x 16):   lane holds row lane % 16, k = 4 (lane / 16) + v, v = 0..3
//   16-bit B (16 x 16):   lane holds row (= column of D) lane % 16, same k
//   e4m3 A / B (16 x 32): row lane % 16, k = 8 (lane / 16) + v, v = 0..7 (byte v of 64 bits)
//   e2m1 A / B (16 x 128): row lane % 16, k = 32 (lane / 16) + v, v = 0..31 (nibble v of 128 bits,
//                          low nibble first)
//   C / D (16 x 16 float): x[v] at row 4 (lane / 16) + v, column lane % 16
// In every operand a lane's k values are contiguous, so A and B (K contiguous in shared memory)
// are one 8- or 16-byte load per lane.
#include <cstdint>

#include "gpu/platform.h"
#include "quant/bits.h"
#include "quant/fp8.h"

#if defined(__AMDGCN__) && !defined(__gfx90a__) && !defined(__gfx942__) && !defined(__gfx950__)
#error "gpu/mma: AMD code is written for gfx90a, gfx942 and gfx950 (MFMA 16x16x16 bf16_1k)"
#endif

namespace mlacheck::gpu::mma {

static_assert(kWarpSize == 64, "the MFMA fragment layouts below are wave64's");

inline constexpr int kM = 16;    // rows of A and C
inline constexpr int kN = 16;    // rows of B = columns of C (MFMA 16x16xK)
inline constexpr int kK16 = 16;  // K of one 16-bit product
inline constexpr int kK8 = 32;   // K of one e4m3 product
inline constexpr int kK4 = 128;  // K of one scaled e2m1 product (gfx950)

// mma_e4m3 means OCP e4m3fn operands, as on NVIDIA. gfx950's fp8 MFMA reads e4m3fn; gfx942's same
// instruction reads e4m3fnuz (bias 8, NaN = 0x80), a different format with the same bits, so there
// it would silently halve every value and misread NaN / -0: no OCP fp8 product there (kernels
// convert to bf16 instead). gfx90a has no fp8 MFMA at all. The host pass sees no arch: false.
#if defined(__gfx950__)
inline constexpr bool kHasFp8Mma = true;
inline constexpr bool kHasScaledMma = true;
#else
inline constexpr bool kHasFp8Mma = false;
inline constexpr bool kHasScaledMma = false;
#endif
// gfx942's native fp8 product, for data already in e4m3fnuz (AMD only; see mma_e4m3fnuz).
#if defined(__gfx942__)
inline constexpr bool kHasFp8FnuzMma = true;
#else
inline constexpr bool kHasFp8FnuzMma = false;
#endif

namespace detail {
using f32x4 = float __attribute__((ext_vector_type(4)));
using i16x4 = short __attribute__((ext_vector_type(4)));
using f16x4 = _Float16 __attribute__((ext_vector_type(4)));
using i32x8 = int __attribute__((ext_vector_type(8)));
using u32x2 = uint32_t __attribute__((ext_vector_type(2)));
using u32x4 = uint32_t __attribute__((ext_vector_type(4)));
}  // namespace detail

// The hardware lane (mbcnt counts the lanes below this one), whatever the block's shape.
__device__ __forceinline__ int lane_id() {
  return static_cast<int>(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
}

// Operands: opaque registers filled by the loads, in the layouts above.
struct TileA16 { uint32_t x[2]; };  // 16 x 16 of 16-bit values
struct TileB16 { uint32_t x[2]; };  // 16 x 16
struct TileA8 { uint32_t x[2]; };   // 16 x 32 e4m3 codes
struct TileB8 { uint32_t x[2]; };   // 16 x 32
struct TileA4 { uint32_t x[4]; };   // 16 x 128 e2m1 codes (gfx950)
struct TileB4 { uint32_t x[4]; };   // 16 x 128

// 16 x 16 float accumulator: x[l] at row 4 (lane / 16) + l, column lane % 16.
struct TileC {
  static constexpr int ne = 4;
  float x[ne] = {0.0f, 0.0f, 0.0f, 0.0f};
  static __device__ __forceinline__ int get_i(int l) { return 4 * (lane_id() / 16) + l; }
  static __device__ __forceinline__ int get_j(int /*l*/) { return lane_id() % 16; }
};

// Two float32 values that are bf16 values, as a bf16 pair (low half = first); exact.
__device__ __forceinline__ uint32_t pack_pair(float first, float second) {
  return (quant::f32_bits(first) >> 16) | (quant::f32_bits(second) & 0xFFFF0000u);
}

// --- loads from shared memory --------------------------------------------------------------------
// A lane's k values are contiguous: one ds_read_b64 (16-bit, e4m3) or ds_read_b128 (e2m1) each.
namespace detail {
__device__ __forceinline__ void load_8_bytes(uint32_t (&x)[2], const void* p) {
  const u32x2 v = *static_cast<const u32x2*>(p);
  x[0] = v[0];
  x[1] = v[1];
}
__device__ __forceinline__ void load_16_bytes(uint32_t (&x)[4], const void* p) {
  const u32x4 v = *static_cast<const u32x4*>(p);
  x[0] = v[0];
  x[1] = v[1];
  x[2] = v[2];
  x[3] = v[3];
}
}  // namespace detail

__device__ __forceinline__ void load_a16(TileA16& a, const uint16_t* base, int stride) {
  const int l = lane_id();
  detail::load_8_bytes(a.x, base + (l % 16) * stride + 4 * (l / 16));
}
__device__ __forceinline__ void load_b16(TileB16& b, const uint16_t* base, int stride) {
  const int l = lane_id();
  detail::load_8_bytes(b.x, base + (l % 16) * stride + 4 * (l / 16));
}

// B (16 x 16) = the transpose of a 16 x 16 block of a K x N row-major array (V as [key][dim]): the
// lane's four k values are four rows of one column, so four 16-bit reads. (gfx950's
// ds_read_b64_tr_b16 would do it in one; not used until it is tested.)
__device__ __forceinline__ void load_b16_trans(TileB16& b, const uint16_t* base, int stride) {
  const int l = lane_id();
  const uint16_t* p = base + 4 * (l / 16) * stride + l % 16;
  b.x[0] = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[stride]) << 16);
  b.x[1] = static_cast<uint32_t>(p[2 * stride]) | (static_cast<uint32_t>(p[3 * stride]) << 16);
}

__device__ __forceinline__ void load_a8(TileA8& a, const uint8_t* base, int stride) {
  const int l = lane_id();
  detail::load_8_bytes(a.x, base + (l % 16) * stride + 8 * (l / 16));
}
__device__ __forceinline__ void load_b8(TileB8& b, const uint8_t* base, int stride) {
  const int l = lane_id();
  detail::load_8_bytes(b.x, base + (l % 16) * stride + 8 * (l / 16));
}

// e2m1 operands (AMD only): rows of 64 bytes = 128 codes, two per byte, low nibble = even k;
// `stride` in bytes.
__device__ __forceinline__ void load_a4(TileA4& a, const uint8_t* base, int stride) {
  const int l = lane_id();
  detail::load_16_bytes(a.x, base + (l % 16) * stride + 16 * (l / 16));
}
__device__ __forceinline__ void load_b4(TileB4& b, const uint8_t* base, int stride) {
  const int l = lane_id();
  detail::load_16_bytes(b.x, base + (l % 16) * stride + 16 * (l / 16));
}

// --- products: D = A · Bᵀ + D, float32 accumulation ---------------------------------------------
namespace detail {
__device__ __forceinline__ f32x4 to_vec(const TileC& d) { return {d.x[0], d.x[1], d.x[2], d.x[3]}; }
__device__ __forceinline__ void from_vec(TileC& d, f32x4 v) {
  d.x[0] = v[0];
  d.x[1] = v[1];
  d.x[2] = v[2];
  d.x[3] = v[3];
}
}  // namespace detail

__device__ __forceinline__ void mma_bf16(TileC& d, const TileA16& a, const TileB16& b) {
  const auto av = __builtin_bit_cast(detail::i16x4, a);
  const auto bv = __builtin_bit_cast(detail::i16x4, b);
  detail::from_vec(d,
                   __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(av, bv, detail::to_vec(d), 0, 0, 0));
}
__device__ __forceinline__ void mma_f16(TileC& d, const TileA16& a, const TileB16& b) {
  const auto av = __builtin_bit_cast(detail::f16x4, a);
  const auto bv = __builtin_bit_cast(detail::f16x4, b);
  detail::from_vec(d, __builtin_amdgcn_mfma_f32_16x16x16f16(av, bv, detail::to_vec(d), 0, 0, 0));
}

// OCP e4m3fn operands (kHasFp8Mma: gfx950 only, see there).
__device__ __forceinline__ void mma_e4m3([[maybe_unused]] TileC& d,
                                         [[maybe_unused]] const TileA8& a,
                                         [[maybe_unused]] const TileB8& b) {
#if defined(__gfx950__)
  detail::from_vec(d, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(__builtin_bit_cast(long, a),
                                                                 __builtin_bit_cast(long, b),
                                                                 detail::to_vec(d), 0, 0, 0));
#else
  __builtin_trap();  // kHasFp8Mma is false: callers branch on it
#endif
}

// AMD only: e4m3fnuz operands on gfx942 (kHasFp8FnuzMma), the format its fp8 MFMA reads.
__device__ __forceinline__ void mma_e4m3fnuz([[maybe_unused]] TileC& d,
                                             [[maybe_unused]] const TileA8& a,
                                             [[maybe_unused]] const TileB8& b) {
#if defined(__gfx942__)
  detail::from_vec(d, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(__builtin_bit_cast(long, a),
                                                                 __builtin_bit_cast(long, b),
                                                                 detail::to_vec(d), 0, 0, 0));
#else
  __builtin_trap();  // kHasFp8FnuzMma is false
#endif
}

// gfx950 (kHasScaledMma): E2M1 operands with E8M0 block-32 scales,
//   D[i][j] += sum over the 4 K blocks b of 2^(sa(i,b) - 127) 2^(sb(j,b) - 127) A_b[i] · B_b[j].
// Each lane passes the scale of the block it holds: scale_a for A row lane % 16, K block lane / 16
// (codes 32 (lane / 16) .. +31), scale_b likewise for B. The scale sits in byte 0 (op_sel 0).
// Builtin arguments: A, B (8 dwords; E2M1 uses the first 4), C, A format (4 = E2M1), B format,
// op_sel A, scale A, op_sel B, scale B.
__device__ __forceinline__ void mma_scaled_e2m1([[maybe_unused]] TileC& d,
                                                [[maybe_unused]] const TileA4& a,
                                                [[maybe_unused]] const TileB4& b,
                                                [[maybe_unused]] uint8_t scale_a,
                                                [[maybe_unused]] uint8_t scale_b) {
#if defined(__gfx950__)
  constexpr int kE2M1 = 4;
  const detail::i32x8 av = {static_cast<int>(a.x[0]), static_cast<int>(a.x[1]),
                            static_cast<int>(a.x[2]), static_cast<int>(a.x[3]), 0, 0, 0, 0};
  const detail::i32x8 bv = {static_cast<int>(b.x[0]), static_cast<int>(b.x[1]),
                            static_cast<int>(b.x[2]), static_cast<int>(b.x[3]), 0, 0, 0, 0};
  detail::from_vec(d, __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(
                          av, bv, detail::to_vec(d), kE2M1, kE2M1, 0, static_cast<int>(scale_a), 0,
                          static_cast<int>(scale_b)));
#else
  __builtin_trap();  // kHasScaledMma is false: callers branch on it
#endif
}

// --- global -> shared copies ---------------------------------------------------------------------
// Synchronous on AMD: a 16-byte global load and an LDS store by this thread (valid = false: zeros,
// nothing read). gfx9 has direct-to-LDS loads (global_load_lds_*), but the ROCm 5.2 headers here
// wrap none and no such path has been tested, so commit / wait are no-ops; the block barrier the
// caller puts after async_wait still makes every thread's stores visible.
__device__ __forceinline__ void async_copy_16(void* dst, const void* src, bool valid) {
  detail::u32x4 v = {0u, 0u, 0u, 0u};
  if (valid) v = *static_cast<const detail::u32x4*>(src);
  *static_cast<detail::u32x4*>(dst) = v;
}
__device__ __forceinline__ void async_commit() {}
template <int Pending>
__device__ __forceinline__ void async_wait() {
  static_assert(Pending >= 0, "async_wait<Pending>: Pending is a count of groups");
}

// --- bulk copies completed by a barrier ---------------------------------------------------------
// NVIDIA sm_90's copy engine (gpu/mma/mma_nvidia.h); gfx9 has no such engine (its direct-to-LDS
// loads are per lane), so none is offered: kHasBulkCopy is false and callers branch on it.
inline constexpr bool kHasBulkCopy = false;
using BulkBarrier = uint64_t;
__device__ __forceinline__ void bulk_barrier_init(BulkBarrier*, int) { __builtin_trap(); }
__device__ __forceinline__ void bulk_barrier_expect(BulkBarrier*, uint32_t) { __builtin_trap(); }
__device__ __forceinline__ void bulk_copy(void*, const void*, uint32_t, BulkBarrier*) { __builtin_trap(); }
__device__ __forceinline__ void bulk_barrier_wait(BulkBarrier*, uint32_t) { __builtin_trap(); }

}  // namespace mlacheck::gpu::mma
