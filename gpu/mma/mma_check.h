#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): gpu/mma/mma.h's tile layer on GPU 0, for
// tests/gpu/mma_test.cpp. Each product runs in one warp: the operands are copied to shared memory
// with padded rows by async_copy_16 (the padding poisoned), loaded with the layer's loads,
// multiplied kMmaCheckSteps times along K, and each C tile is written through TileC::get_i / get_j
// into a NaN-poisoned output, so a wrong fragment layout gives wrong or missing values.
// Every function throws gpu::Error on runtime failures, std::invalid_argument on wrong sizes and
// std::logic_error when the device lacks the product.
#include <cstdint>
#include <vector>

#include "quant/hd.h"

namespace mlacheck::gpu {

// The layer's constants as the device code built for GPU 0 sees them.
struct MmaLayerInfo {
  int warp_size = 0;
  int m = 0;   // kM
  int n = 0;   // kN
  int k16 = 0;  // kK16
  int k8 = 0;   // kK8
  int k4 = 0;   // kK4 (AMD), 0 elsewhere
  bool has_fp8 = false;       // kHasFp8Mma (OCP e4m3fn)
  bool has_fp8_fnuz = false;  // kHasFp8FnuzMma (AMD gfx942 only)
  bool has_scaled = false;    // kHasScaledMma
};
MmaLayerInfo device_mma_layer_info();

// Every checked product: D is m x N with N = kMmaCheckTiles * n (C tiles side by side), over
// K = kMmaCheckSteps * kK (products accumulated in one C tile).
inline constexpr int kMmaCheckTiles = 2;
inline constexpr int kMmaCheckSteps = 4;

enum class Mma16 { bf16, f16 };
// a: m x K, b: N x K (b_transposed: K x N, read with load_b16_trans), 16-bit patterns, row major.
// Returns D = A · Bᵀ, m x N row major.
std::vector<float> device_mma16(Mma16 type, bool b_transposed, const std::vector<uint16_t>& a,
                                const std::vector<uint16_t>& b);

enum class Mma8 { e4m3fn, e4m3fnuz };
// a: m x K, b: N x K codes (mma_e4m3, or mma_e4m3fnuz on AMD gfx942).
std::vector<float> device_mma8(Mma8 type, const std::vector<uint8_t>& a,
                               const std::vector<uint8_t>& b);

// mma_scaled_e2m1 (AMD gfx950): a: m x K/2 bytes, b: N x K/2 bytes (two E2M1 codes a byte, low
// nibble first), scale_a: m x K/32 and scale_b: N x K/32 E8M0 codes, one per block of 32.
std::vector<float> device_mma_scaled_e2m1(const std::vector<uint8_t>& a,
                                          const std::vector<uint8_t>& b,
                                          const std::vector<uint8_t>& scale_a,
                                          const std::vector<uint8_t>& scale_b);

// common::e4m3fn_pair_to_bf16_pair(c) (or e4m3fn_pair_to_f16_pair(c), gpu/common/operand_decode.h:
// the device build of its per-vendor paths) for every c in 0 .. 65535, index c. bf16_quad_lo /
// bf16_quad_hi: the `lo` / `hi` pair of common::e4m3fn_quad_to_bf16_pairs(c | c << 16), as the
// Hopper kernel decodes a word.
enum class PairTo { bf16, f16, bf16_quad_lo, bf16_quad_hi };
std::vector<uint32_t> device_e4m3fn_pairs(PairTo to);

// The eight-code MXFP4 decode of the Hopper family's a16w4 tiles (gpu/common/operand_decode.h) on
// the device: for every scale s (0..255) and code byte c, the four pairs of
// mxfp4_octet_to_bf16_pairs(mxfp4_octet_word(c), s); entry 4 (256 s + c) + k is byte k's pair.
// The word holds c and three other bytes, so every byte position sees every code.
MLACHECK_HD constexpr uint32_t mxfp4_octet_word(uint32_t c) {
  return c | ((c + 85u) & 0xFFu) << 8 | ((c + 170u) & 0xFFu) << 16 | ((c + 255u) & 0xFFu) << 24;
}
std::vector<uint32_t> device_mxfp4_octets();

// The Hopper kernel's P rounding on the device against the codecs, for every float32 p whose bits
// lie in first_bits .. last_bits (each as p0 of one call and as p1 of another; NaN by NaN-ness):
// e4m3fn_f16, common::p_pair_to_e4m3fn_f16_pair (the all-fp8 recipes) against
// e4m3fn_to_f16_bits(quant::f32_to_fp8(p)); f16, common::f32_pair_to_f16_pair (a4w4) against
// common::f16_bits(p). Returns the number of disagreeing halves and the bits of the smallest such p
// (0xFFFFFFFF when none).
enum class PRounding { e4m3fn_f16, f16 };
struct PRoundingCheck {
  uint64_t wrong = 0;
  uint32_t first_wrong_bits = 0xFFFFFFFFu;
};
PRoundingCheck device_p_pair_rounding(PRounding to, uint32_t first_bits, uint32_t last_bits);

// common::bf16_pair_to_f16_pair (the a4w4 value tile's V) on the device for the pair
// bf16_pair_word(c), entry c, c = 0 .. 65535: the low halves run through every bf16 value, and so
// do the high ones (c ↦ 40503 c + 12345 mod 2^16 is a bijection: 40503 is odd).
MLACHECK_HD constexpr uint32_t bf16_pair_word(uint32_t c) {
  return (c & 0xFFFFu) | ((c * 40503u + 12345u) & 0xFFFFu) << 16;
}
std::vector<uint32_t> device_bf16_pairs_to_f16();

// kAsyncCopyChunks chunks of 16 bytes copied by async_copy_16 into poisoned shared memory (chunk
// c with valid = valid[c] != 0) in two commit groups, read back by another thread after
// async_wait and a barrier: src holds 16 * kAsyncCopyChunks bytes; returns the shared bytes.
inline constexpr int kAsyncCopyChunks = 256;
std::vector<uint8_t> device_async_copy_16(const std::vector<uint8_t>& src,
                                          const std::vector<uint8_t>& valid);

}  // namespace mlacheck::gpu
