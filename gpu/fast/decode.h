#pragma once
// Cache codes to the 16-bit operands of the fast kernel's products, exactly, with few instructions
// (the decode runs once per element of every tile and competes with the products for issue
// slots). Each fast path is exact on the inputs it takes and hands the rest (NaN codes, scales
// whose products leave float32's normal range) to the codecs of quant/, so the result has the
// bits of portable::pair_of(quant::...) for every input; tests/gpu/fast_decode_test.cpp checks it
// on the host over every code pair and scale.
#include <cstdint>

#include "gpu/portable/rounding.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "quant/hd.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu::fast {

// f16 bit patterns: portable::f16_bits (gpu/portable/rounding.h), exact on fp8 values and on P
// rounded to fp8.
using portable::f16_bits;

// Two e4m3fn codes (low byte first) as a bf16 pair (low half first). The 7 magnitude bits placed in
// float32's exponent and mantissa fields read 2^(e-127)·(1 + m/8) (or m/8·2^-126 for e = 0); times
// 2^120 that is the e4m3fn value 2^(e-7)·(1 + m/8) (or m·2^-9), exactly (no rounding, no flush:
// the kernels keep float32 subnormals). Code 0x7F / 0xFF (NaN) goes to the codec.
MLACHECK_HD inline uint32_t e4m3fn_pair_to_bf16_pair(uint32_t codes) {
  if ((((codes & 0x7F7Fu) + 0x0101u) & 0x8080u) != 0) {  // a magnitude of 0x7F: NaN
    const float lo = quant::fp8_to_f32(static_cast<uint8_t>(codes), quant::Fp8Format::e4m3fn);
    const float hi = quant::fp8_to_f32(static_cast<uint8_t>(codes >> 8), quant::Fp8Format::e4m3fn);
    return (quant::f32_bits(lo) >> 16) | (quant::f32_bits(hi) & 0xFFFF0000u);
  }
  const float lo = quant::f32_from_bits((codes & 0x7Fu) << 20) * 0x1p120f;
  const float hi = quant::f32_from_bits((codes & 0x7F00u) << 12) * 0x1p120f;
  return (quant::f32_bits(lo) >> 16) | ((codes & 0x80u) << 8) | (quant::f32_bits(hi) & 0xFFFF0000u) |
         ((codes & 0x8000u) << 16);
}

// The same two codes as an f16 pair (every e4m3fn value is an f16 value).
MLACHECK_HD inline uint32_t e4m3fn_pair_to_f16_pair_generic(uint32_t codes) {
  const float lo = quant::fp8_to_f32(static_cast<uint8_t>(codes), quant::Fp8Format::e4m3fn);
  const float hi = quant::fp8_to_f32(static_cast<uint8_t>(codes >> 8), quant::Fp8Format::e4m3fn);
  return static_cast<uint32_t>(f16_bits(lo)) | (static_cast<uint32_t>(f16_bits(hi)) << 16);
}

// E2M1 magnitude m (0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6) as float32: for m >= 2 the bf16 pattern is
// (m << 6) + 0x3F00 (exponent 127 + (m >> 1) - 1, mantissa bit m & 1), 0.5 and 0 apart.
MLACHECK_HD inline float e2m1_magnitude(uint32_t m) {
  const uint32_t bits = m >= 2 ? (m << 6) + 0x3F00u : m == 1 ? 0x3F00u : 0u;
  return quant::f32_from_bits(bits << 16);
}

// Two MXFP4 elements (one code byte, low nibble first) with their block scale, as a bf16 pair:
// e2m1 · 2^(s-127) in float32 (the reference's product, exact: 2 significant bits, and the
// product of a normal scale and a value < 8 stays below float32's max for s <= 253), then its top
// 16 bits (exact: 2 significant bits). Scales 0 (2^-127, a subnormal), 254 and 255 (NaN) go to the
// codec.
MLACHECK_HD inline uint32_t mxfp4_pair_to_bf16_pair(uint32_t codes, uint32_t scale) {
  if (scale == 0 || scale >= 254) {
    const float s = quant::e8m0_to_f32(static_cast<uint8_t>(scale));
    const float lo = quant::detail::mul_amd_nan(quant::e2m1_to_f32(codes & 0x0F), s);
    const float hi = quant::detail::mul_amd_nan(quant::e2m1_to_f32((codes >> 4) & 0x0F), s);
    return (quant::f32_bits(lo) >> 16) | (quant::f32_bits(hi) & 0xFFFF0000u);
  }
  const float s = quant::f32_from_bits(scale << 23);
  const float lo = e2m1_magnitude(codes & 7) * s;
  const float hi = e2m1_magnitude((codes >> 4) & 7) * s;
  return (quant::f32_bits(lo) >> 16) | ((codes & 0x08u) << 12) | (quant::f32_bits(hi) & 0xFFFF0000u) |
         ((codes & 0x80u) << 24);
}

}  // namespace mlacheck::gpu::fast
