#pragma once
// float32 <-> FP8 e4m3fn / e4m3fnuz (NUMERICS §3).
#include <cstdint>

#include "quant/bits.h"
#include "quant/formats.h"
#include "quant/grid.h"
#include "quant/hd.h"

namespace mlacheck::quant {

namespace detail {

inline constexpr uint8_t kFp8SignBit = 0x80;

// The positive NaN code (§3.1): e4m3fn 0x7F (0xFF with the sign), e4m3fnuz 0x80 (its only NaN).
MLACHECK_HD constexpr uint8_t fp8_nan_code(Fp8Format f) noexcept {
  return format_info(elem_format(f)).nan == NanEncoding::negative_zero ? 0x80 : 0x7F;
}

// Magnitude code of the largest finite value: e4m3fn 0x7E (0x7F is NaN), e4m3fnuz 0x7F.
MLACHECK_HD constexpr uint8_t fp8_max_code(Fp8Format f) noexcept {
  return format_info(elem_format(f)).nan == NanEncoding::mantissa_all_ones ? 0x7E : 0x7F;
}

}  // namespace detail

MLACHECK_HD constexpr float fp8_max(Fp8Format f) noexcept {
  return format_info(elem_format(f)).max_finite;
}

// Round to nearest even onto the format's grid (§3.2 e4m3fn, §3.3 e4m3fnuz). Values that round past
// the max (e4m3fn |x| > 464, e4m3fnuz |x| >= 248) and ±Inf give NaN under Overflow::nan
// (torch 2.11) or ±max under Overflow::saturate. NaN gives NaN under both: e4m3fn 0x7F | sign,
// e4m3fnuz 0x80. e4m3fnuz has no -0: results that round to zero are 0x00 whatever the sign.
MLACHECK_HD constexpr uint8_t f32_to_fp8(float x, Fp8Format f,
                                         Overflow o = Overflow::nan) noexcept {
  const FormatInfo info = format_info(elem_format(f));
  const bool fnuz = info.nan == NanEncoding::negative_zero;
  const uint32_t u = f32_bits(x);
  const uint8_t sign = (u & detail::kF32SignMask) != 0 ? detail::kFp8SignBit : 0;
  if (detail::is_nan_bits(u))
    return fnuz ? detail::fp8_nan_code(f) : detail::fp8_nan_code(f) | sign;
  const uint32_t mag =
      detail::round_magnitude_rne(u & detail::kF32AbsMask, info.mant_bits, info.bias);
  if (mag > detail::fp8_max_code(f)) {  // rounds past the max, or Inf
    if (o == Overflow::saturate) return detail::fp8_max_code(f) | sign;
    return fnuz ? detail::fp8_nan_code(f) : detail::fp8_nan_code(f) | sign;
  }
  if (mag == 0 && fnuz) return 0x00;
  return static_cast<uint8_t>(mag) | sign;
}

// Exact value of a code (§3.4). NaN codes decode to the bits PyTorch gives them: e4m3fn
// 0x7F -> 0x7FF00000 and 0xFF -> 0xFFF00000, e4m3fnuz 0x80 -> 0x7F800001. e4m3fn 0x80 is -0.0.
MLACHECK_HD constexpr float fp8_to_f32(uint8_t code, Fp8Format f) noexcept {
  const FormatInfo info = format_info(elem_format(f));
  const uint32_t sign = (code & detail::kFp8SignBit) != 0 ? detail::kF32SignMask : 0u;
  const uint32_t mag = code & 0x7Fu;
  // Bits selected as integers and cast once (see e8m0_to_f32: nvcc quieted the NaN constant
  // 0x7F800001 when it was returned as a float).
  uint32_t bits = sign | detail::decode_magnitude(mag, info.mant_bits, info.bias);
  if (info.nan == NanEncoding::negative_zero) {
    if (code == 0x80) bits = 0x7F800001u;
  } else if (mag == 0x7F) {
    bits = sign | 0x7FF00000u;
  }
  return f32_from_bits(bits);
}

}  // namespace mlacheck::quant
