#pragma once
// Bulk quantizers: whole tensors to FP8 (per-tensor scale) and MXFP4 (block-32 scales), bit-exact
// to NUMERICS §4, §4.1 and §5. Inputs are flat row-major spans; outputs go into caller-provided
// spans whose sizes are checked (std::invalid_argument on a mismatch). OpenMP-parallel; every
// result is independent of the thread count (elementwise work plus exact max reductions).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "quant/formats.h"

namespace mlacheck::quant {

// MXFP4 block length (NUMERICS §5: one E8M0 scale per 32 consecutive elements of a row).
inline constexpr std::size_t kMxfp4BlockSize = 32;

// The harness's `quantize_fp8` (NUMERICS §4), bf16 intermediates included: amax in bf16, floor
// bf16(1e-12), s = bf16(amax * fl32(1/M)), y = bf16(x / s), clamp ±M, RNE to FP8 (NaN on
// overflow). x holds bf16 bit patterns; returns the scale, float32(s). A NaN anywhere makes s and
// every code NaN; bf16 NaNs are 0x7FC0 (Decisions table), so NaN codes carry no sign.
float fp8_harness_quantize(std::span<const uint16_t> x_bf16, Fp8Format fmt,
                           std::span<uint8_t> codes);
// The same, also writing the bf16 value each element has just before the FP8 cast (after step
// 5's clamp) into y_bf16, for locating where a difference starts.
float fp8_harness_quantize(std::span<const uint16_t> x_bf16, Fp8Format fmt,
                           std::span<uint8_t> codes, std::span<uint16_t> y_bf16);

// The same over the rows with row_read[r] set only (row r = elements [r*row_len, (r+1)*row_len)):
// the others take no part in amax, whatever they hold (NaN included), and get the codes of +0.
// Equal to fp8_harness_quantize of a copy with those rows zeroed, without the copy.
float fp8_harness_quantize_rows(std::span<const uint16_t> x_bf16, std::size_t row_len,
                                const std::vector<bool>& row_read, Fp8Format fmt,
                                std::span<uint8_t> codes);

// fp8_harness_quantize(_rows) in two steps, for a tensor quantized a few rows at a time and never
// held whole (the golden FP8 cache, issue 11 item 6). First the scale (steps 1-3), over every
// element or over the rows with row_read[r] set; then steps 4-6 at that scale, element by element,
// which depend on nothing but the element: the table holds the code of every bf16 bit pattern
// (index = the bits). fp8_harness_quantize's code of element x is table[x], and
// fp8_harness_quantize_rows' of a row not read table[0]; both functions are built from these steps.
float fp8_harness_scale(std::span<const uint16_t> x_bf16, Fp8Format fmt);
float fp8_harness_scale_rows(std::span<const uint16_t> x_bf16, std::size_t row_len,
                             const std::vector<bool>& row_read, Fp8Format fmt);
inline constexpr std::size_t kBf16Patterns = std::size_t{1} << 16;
std::vector<uint8_t> fp8_harness_code_table(float scale, Fp8Format fmt);  // kBf16Patterns codes

// aiter's dynamic_per_tensor_quant (`fp8-dynamic`, NUMERICS §4.1 with the IEEE reciprocal of aiter
// <= 2026-03-17): scale = max over rows of fl32(rowAbsMax * fl32(1/M)) in float32, no floor;
// inv = fl32(1/scale); code = RNE(clamp(fl32(x * inv), ±M)). Returns the scale.
// Choices where the GPU's behaviour is not established (§4.1):
// - NaN elements are ignored by the row max (fmaxf semantics, as HIP's max(float, float)); they
//   encode to the NaN code with their own sign. An Inf element makes the scale Inf and inv 0, so
//   finite elements give ±0 and the Inf itself Inf * 0 = +NaN (AMD's default NaN).
// - All-zero input (scale 0): 1/0 would make every 0 * Inf a NaN; mlacheck instead uses inv = 0 so
//   every code is the zero of the input's sign (e4m3fn 0x00/0x80, e4m3fnuz 0x00) and the returned
//   scale is 0. Any finite code times a zero scale dequantizes to 0, which is what the data was.
// - Float32 denormal flushing of the GPU build is not emulated (only matters when the scale is a
//   float32 subnormal, i.e. rowAbsMax < M * 2^-126).
// x.size() must be a multiple of row_len (row_len > 0).
float fp8_dynamic_quantize(std::span<const float> x, std::size_t row_len, Fp8Format fmt,
                           std::span<uint8_t> codes);

// `fp8-static` (NUMERICS §4.1, static_per_tensor_quant): the element rule of fp8_dynamic_quantize
// with a given scale, which must be finite and > 0.
void fp8_static_quantize(std::span<const float> x, float scale, Fp8Format fmt,
                         std::span<uint8_t> codes);

// `fp8-cast`: plain f32_to_fp8 of every element (scale 1).
void fp8_cast(std::span<const float> x, Fp8Format fmt, Overflow overflow, std::span<uint8_t> codes);

// aiter's dynamic_mxfp4_quant (NUMERICS §5) of rows of row_len elements (a non-zero multiple of
// 32): per block, amax over the non-NaN |x| (§5.1), e = mxfp4_block_exponent(amax), scale byte
// e + 127 (AMD, §5.2), qx = fl32(x * 2^-e), E2M1 code by `rounding` (§5.3), packed two per byte
// with the even element in the low nibble (§5.5). packed has x.size()/2 bytes, scales x.size()/32.
// Platform corners (§5.8), mlacheck's choices:
// - e = 127 (amax >= 0x7F600000 or Inf): the multiplier 2^-127 is a float32 subnormal; it is
//   flushed to 0 as NVIDIA does (observed; AMD not established), so finite elements give ±0.
// - NaN qx keeps its input payload, quieted, as AMD does ([AMD, inferred]); Inf * 0 in an e = 127
//   block gives AMD's default NaN 0x7FC00000. (NVIDIA writes 0x7FFFFFFF for both.)
// - An all-NaN block has amax 0 (NaNs ignored, the max starts at 0), so e = -127.
// - Old rule's shift counts >= 32: count mod 32 (AMD), see f32_to_e2m1.
void mxfp4_quantize(std::span<const float> x, std::size_t row_len, E2M1Rounding rounding,
                    std::span<uint8_t> packed, std::span<uint8_t> scales);

// mxfp4_quantize of one row (a multiple of 32 elements) on the calling thread, no thread team:
// for a cache row quantized when it is read, inside the emulation's own threads. The same bytes.
void mxfp4_quantize_row(std::span<const float> x, E2M1Rounding rounding, std::span<uint8_t> packed,
                        std::span<uint8_t> scales);
// The scale bytes of mxfp4_quantize alone (the E2M1 codes are not computed): scales x.size()/32.
void mxfp4_scales(std::span<const float> x, std::size_t row_len, std::span<uint8_t> scales);

// Inverse of the packing: out[i] = e2m1_to_f32(code i) * e8m0_to_f32(its block's scale), in
// float32 (NUMERICS §5.7). out.size() must be a multiple of row_len (a multiple of 32), packed
// out.size()/2 bytes and scales out.size()/32. Scale 0xFF gives NaN (0x7FC00001, quieted).
void mxfp4_dequantize(std::span<const uint8_t> packed, std::span<const uint8_t> scales,
                      std::size_t row_len, std::span<float> out);

}  // namespace mlacheck::quant
