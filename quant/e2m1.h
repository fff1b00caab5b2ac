#pragma once
// float32 <-> E2M1 (FP4) element codes of aiter's dynamic_mxfp4_quant (NUMERICS §5.3, §5.7).
// Code = s e e m; magnitudes of codes 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 is the sign.
#include <cstdint>

#include "quant/bits.h"
#include "quant/formats.h"
#include "quant/grid.h"
#include "quant/hd.h"

namespace mlacheck::quant {

namespace detail {

inline constexpr uint8_t kE2M1SignBit = 0x8;
inline constexpr uint8_t kE2M1MaxCode = 0x7;  // 6.0

// New rule (aiter e6af9a487dc4, 2026-03-17): RNE, saturating at 6, on the magnitude bits a.
// A NaN fails every comparison in the kernel, so it lands in the "1 <= a < 6" formula applied to
// its own bits, whose low byte is 2, 3 or 4 depending on the top fraction bits (§5.3).
MLACHECK_HD constexpr uint8_t e2m1_magnitude_rne(uint32_t a) noexcept {
  const FormatInfo info = format_info(ElemFormat::e2m1);
  if (is_nan_bits(a)) {
    const uint32_t normal = round_magnitude_rne(a, info.mant_bits, info.bias);
    return static_cast<uint8_t>(normal & 0xFFu);
  }
  const uint32_t mag = round_magnitude_rne(a, info.mant_bits, info.bias);
  return mag > kE2M1MaxCode ? kE2M1MaxCode : static_cast<uint8_t>(mag);
}

// Old rule (aiter 2c17c35cc3b6, 2025-10-28): ties away from zero, saturating at 6, the kernel's
// bit operations verbatim (§5.3). NaN and Inf take the E >= 127 branch and give 7. For |qx| < 2^-32
// the shift count 126 - E is >= 32; the AMD shift uses it mod 32 ([AMD, inferred], §5.3, §5.8),
// which NVIDIA does not (it yields 0) -- mlacheck follows AMD.
MLACHECK_HD constexpr uint8_t e2m1_magnitude_ties_away(uint32_t a) noexcept {
  const uint32_t biased_exp = a >> kF32FracBits;
  const uint32_t frac = a & ((1u << kF32FracBits) - 1u);
  if (biased_exp >= static_cast<uint32_t>(kF32Bias)) {  // a >= 1
    const uint32_t t = frac >> 21;                      // top two fraction bits
    const uint32_t e = biased_exp - 126;  // exponent rebiased to E2M1's bias 1, plus 1
    const uint32_t code = (((e << 2) | t) + 1u) >> 1;
    return code > kE2M1MaxCode ? kE2M1MaxCode : static_cast<uint8_t>(code);
  }
  const uint32_t shift = (126u - biased_exp) & 31u;  // AMD: count mod 32
  const uint32_t g = ((1u << 22) | (frac >> 1)) >> shift;
  const uint32_t t = g >> 21;
  return static_cast<uint8_t>((t + 1u) >> 1);
}

}  // namespace detail

// E2M1 code of qx = x * 2^-e (the already scaled element). The sign is copied into bit 3 for every
// result, zero and NaN included, so -0 and tiny negatives give code 8.
MLACHECK_HD constexpr uint8_t f32_to_e2m1(float qx, E2M1Rounding r) noexcept {
  const uint32_t u = f32_bits(qx);
  const uint8_t sign = (u & detail::kF32SignMask) != 0 ? detail::kE2M1SignBit : 0;
  const uint32_t a = u & detail::kF32AbsMask;
  const uint8_t mag =
      r == E2M1Rounding::rne ? detail::e2m1_magnitude_rne(a) : detail::e2m1_magnitude_ties_away(a);
  return mag | sign;
}

// Exact value of a 4-bit code (§5.7); the upper four bits of `code` are ignored.
MLACHECK_HD constexpr float e2m1_to_f32(uint8_t code) noexcept {
  const FormatInfo info = format_info(ElemFormat::e2m1);
  const uint32_t sign = (code & detail::kE2M1SignBit) != 0 ? detail::kF32SignMask : 0u;
  return f32_from_bits(
      sign | detail::decode_magnitude(code & detail::kE2M1MaxCode, info.mant_bits, info.bias));
}

}  // namespace mlacheck::quant
