#pragma once
// Round to nearest even onto, and decode from, the magnitude grid of a small float format with
// `mant_bits` mantissa bits and exponent bias `bias` (formats.h). A magnitude code is the format's
// code without the sign: (biased exponent << mant_bits) | mantissa, exponent 0 = subnormals. The
// encoders in fp8.h and e2m1.h add their sign, NaN and overflow rules on top (NUMERICS §3, §5.3).
#include <cstdint>

#include "quant/bits.h"
#include "quant/hd.h"

namespace mlacheck::quant::detail {

// m >> s rounded to nearest, ties to even; s in [1, 31].
MLACHECK_HD constexpr uint32_t shift_right_rne(uint32_t m, int s) noexcept {
  const uint32_t q = m >> s;
  const uint32_t rem = m & ((1u << s) - 1u);
  const uint32_t half = 1u << (s - 1);
  return q + ((rem > half || (rem == half && (q & 1u) != 0)) ? 1u : 0u);
}

// RNE magnitude code of the non-NaN float32 magnitude bits `a` (sign clear). The result is not
// bounded by the format's largest code: a value that rounds past it (or Inf) gives a larger
// number, which the caller turns into NaN or saturates. Normal results use the integer rounding of
// NUMERICS §3.2 step 3 and §5.3 (rebias the exponent, round the fraction, a carry increments the
// exponent); results below the smallest normal round the significand at the subnormal spacing
// 2^(1 - bias - mant_bits), which equals the "add a power of two" trick of §3.2 step 2.
MLACHECK_HD constexpr uint32_t round_magnitude_rne(uint32_t a, int mant_bits, int bias) noexcept {
  const int exp32 = static_cast<int>(a >> kF32FracBits);
  const int frac_shift = kF32FracBits - mant_bits;
  if (exp32 - kF32Bias + bias >= 1) {  // a normal value of the target format
    const uint32_t rounded = a + (1u << (frac_shift - 1)) - 1u + ((a >> frac_shift) & 1u);
    return (rounded >> frac_shift) - (static_cast<uint32_t>(kF32Bias - bias) << mant_bits);
  }
  // Subnormal target: significand * 2^(exp - 150) on the spacing 2^(1 - bias - mant_bits).
  const uint32_t frac = a & ((1u << kF32FracBits) - 1u);
  const uint32_t significand = exp32 == 0 ? frac : (frac | (1u << kF32FracBits));
  const int eff_exp = exp32 == 0 ? 1 : exp32;  // float32 subnormals share exponent 1's scale
  const int s = (1 - bias - mant_bits) - (eff_exp - kF32Bias - kF32FracBits);
  if (s > kF32FracBits + 1) return 0;  // significand < 2^24 <= half a step: rounds to 0
  return shift_right_rne(significand, s);
}

// float32 bits of the (non-negative) value of a magnitude code; exact.
MLACHECK_HD constexpr uint32_t decode_magnitude(uint32_t code, int mant_bits, int bias) noexcept {
  const uint32_t exp = code >> mant_bits;
  const uint32_t mant = code & ((1u << mant_bits) - 1u);
  const int frac_shift = kF32FracBits - mant_bits;
  if (exp != 0)
    return (static_cast<uint32_t>(static_cast<int>(exp) - bias + kF32Bias) << kF32FracBits) |
           (mant << frac_shift);
  if (mant == 0) return 0;
  // Subnormal: mant * 2^(1 - bias - mant_bits); normalise on the leading one.
  int lead = mant_bits - 1;
  while (((mant >> lead) & 1u) == 0) --lead;
  const int exponent = 1 - bias - mant_bits + lead;
  return (static_cast<uint32_t>(exponent + kF32Bias) << kF32FracBits) |
         ((mant ^ (1u << lead)) << (kF32FracBits - lead));
}

}  // namespace mlacheck::quant::detail
