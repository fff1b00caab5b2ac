#pragma once
// Rounding a float32 onto the grids the recipes pass through (P before P·V, V in the P·V operand
// type, bf16 partials), by quant/'s codecs: RNE, as the reference's ref/round_to.h. Host + device;
// tests/gpu/rounding_test.cpp compares every bf16 input with the reference's functions.
#include <cstdint>

#include "problem/recipe.h"
#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/formats.h"
#include "quant/fp8.h"
#include "quant/grid.h"
#include "quant/hd.h"

namespace mlacheck::gpu::common {

MLACHECK_HD constexpr float round_to_bf16(float x) {
  return quant::bf16_to_f32(quant::f32_to_bf16(x));
}

// IEEE binary16 (10 mantissa bits, bias 15) as bit patterns: RNE, subnormals kept, past 65504
// (after rounding) ±Inf, NaN the quiet f16 NaN with x's sign.
inline constexpr int kF16MantBits = 10;
inline constexpr int kF16Bias = 15;
inline constexpr uint32_t kF16MaxMagnitude = 0x7BFF;  // 65504
inline constexpr uint32_t kF16InfMagnitude = 0x7C00;
MLACHECK_HD constexpr uint16_t f16_bits(float x) {
  const uint32_t u = quant::f32_bits(x);
  const uint32_t sign = (u >> 16) & 0x8000u;
  if (quant::detail::is_nan_bits(u)) return static_cast<uint16_t>(sign | 0x7E00u);
  const uint32_t mag =
      quant::detail::round_magnitude_rne(u & quant::detail::kF32AbsMask, kF16MantBits, kF16Bias);
  return static_cast<uint16_t>(sign | (mag > kF16MaxMagnitude ? kF16InfMagnitude : mag));
}

// x rounded to binary16 and back to float32; NaN unchanged.
MLACHECK_HD constexpr float round_to_f16(float x) {
  const uint32_t u = quant::f32_bits(x);
  if (quant::detail::is_nan_bits(u)) return x;
  const uint32_t h = f16_bits(x);
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t mag = h & 0x7FFFu;
  if (mag == kF16InfMagnitude) return quant::f32_from_bits(sign | quant::detail::kF32InfBits);
  return quant::f32_from_bits(sign | quant::detail::decode_magnitude(mag, kF16MantBits, kF16Bias));
}

// Overflow gives NaN (the torch cast); P <= 1 never overflows.
MLACHECK_HD constexpr float round_to_fp8(float x, quant::Fp8Format f) {
  return quant::fp8_to_f32(quant::f32_to_fp8(x, f), f);
}

template <problem::PFormat P>
MLACHECK_HD constexpr float round_to_p(float x, quant::Fp8Format f) {
  if constexpr (P == problem::PFormat::bf16) return round_to_bf16(x);
  else if constexpr (P == problem::PFormat::f16) return round_to_f16(x);
  else if constexpr (P == problem::PFormat::fp8) return round_to_fp8(x, f);
  else return x;
}

}  // namespace mlacheck::gpu::common
