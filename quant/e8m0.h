#pragma once
// MXFP4 block scale: exponent choice ("even" mode) and E8M0 bytes (NUMERICS §5.2, §5.7).
#include <cstdint>

#include "quant/bits.h"
#include "quant/hd.h"

namespace mlacheck::quant {

namespace detail {
inline constexpr int kE8M0Bias = 127;
inline constexpr int kMxfp4MinExponent = -127;  // §5.2 step 2 clamp
inline constexpr int kMxfp4MaxExponent = 127;
inline constexpr int kE2M1MaxExponent = 2;  // 6 = 1.5 * 2^2: the "- 2" of §5.2 step 2
}  // namespace detail

// Shared exponent e of a 32-element block with maximum magnitude `amax` >= 0 (§5.2):
// r = (bits(amax) + 0x200000) & 0xFF800000 rounds amax up to the next power of two iff its
// mantissa fraction is >= 0.75, then e = clamp(floor(log2 r) - 2, -127, 127). r = 0 (amax = 0 or a
// float32 subnormal below 0x00600000) gives -127, r = Inf (amax >= 0x7F600000 or Inf) gives 127.
// A NaN amax is outside the spec (§5.1: NaN elements are ignored); the integer formula is applied
// as the kernel would, a wrap to -0 giving -127.
MLACHECK_HD constexpr int mxfp4_block_exponent(float amax) noexcept {
  const uint32_t r = (f32_bits(amax) + 0x200000u) & 0xFF800000u;
  if ((r & detail::kF32SignMask) != 0) return detail::kMxfp4MinExponent;  // log2(-0) = -Inf
  const int biased = static_cast<int>(r >> detail::kF32FracBits);
  if (biased == 0) return detail::kMxfp4MinExponent;     // log2(0) = -Inf
  if (biased == 0xFF) return detail::kMxfp4MaxExponent;  // log2(Inf) = +Inf
  const int e = biased - detail::kF32Bias - detail::kE2M1MaxExponent;
  return e < detail::kMxfp4MinExponent ? detail::kMxfp4MinExponent : e;
}

// Stored scale byte: e + 127, as on AMD where the kernel's float -> uint8 conversion of a negative
// e wraps (NUMERICS Decisions table, §5.2 step 4). NVIDIA would store max(e, 0) + 127.
MLACHECK_HD constexpr uint8_t e8m0_from_exponent(int e) noexcept {
  return static_cast<uint8_t>(e + detail::kE8M0Bias);
}

// 2^(b - 127) for 1 <= b <= 254; 0x00 -> 2^-127 (the float32 subnormal 0x00400000, not zero);
// 0xFF -> the NaN 0x7F800001 (§5.7, what aiter's e8m0_to_f32 and torch both give).
MLACHECK_HD constexpr float e8m0_to_f32(uint8_t b) noexcept {
  // Bits selected as integers and cast once: with a float constant per branch, nvcc's sm_90 code
  // returned the signalling 0x7F800001 quieted to 0x7FC00001 (observed on an H200).
  const uint32_t bits = b == 0x00   ? 0x00400000u
                        : b == 0xFF ? 0x7F800001u
                                    : static_cast<uint32_t>(b) << detail::kF32FracBits;
  return f32_from_bits(bits);
}

// float32 -> E8M0 as torch's float8_e8m0fnu cast (c10 fp8e8m0fnu_from_fp32_value) and aiter's CPU
// f32_to_e8m0 compute it (NUMERICS §5.7): the sign is ignored; exponent field 0xFF (Inf, NaN)
// gives 0xFF; otherwise the biased exponent goes up by one when the fraction's top bit is set and
// (a lower fraction bit is set or the float32 is normal), so 1.5 * 2^127 and above give 0xFF too.
// Not used by the harness or the MXFP4 quantizer; mlacheck has it for `mlacheck quant` and to
// reproduce torch's codes (oracle `tricky__e8m0_torch`).
MLACHECK_HD constexpr uint8_t f32_to_e8m0(float x) noexcept {
  const uint32_t u = f32_bits(x);
  const uint32_t biased = (u >> detail::kF32FracBits) & 0xFFu;
  if (biased == 0xFFu) return 0xFF;
  const bool guard = (u & 0x400000u) != 0;  // fraction bit 22: fraction >= 0.5
  const bool rest = (u & 0x3FFFFFu) != 0;   // any lower fraction bit
  const bool implicit_one = biased != 0;    // the "lsb" of an exponent-only format
  return static_cast<uint8_t>(biased + ((guard && (rest || implicit_one)) ? 1u : 0u));
}

}  // namespace mlacheck::quant
