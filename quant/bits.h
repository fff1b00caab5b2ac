#pragma once
// float32 <-> bit pattern. __builtin_bit_cast rather than std::bit_cast: it is constexpr in g++,
// clang and nvcc alike and needs no standard header that a device compiler might reject.
#include <cstdint>

#include "quant/hd.h"

namespace mlacheck::quant {

MLACHECK_HD constexpr uint32_t f32_bits(float x) noexcept {
  return __builtin_bit_cast(uint32_t, x);
}
MLACHECK_HD constexpr float f32_from_bits(uint32_t u) noexcept {
  return __builtin_bit_cast(float, u);
}

namespace detail {

// IEEE binary32 field layout (sign 1, exponent 8, fraction 23).
inline constexpr uint32_t kF32SignMask = 0x80000000u;
inline constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32InfBits = 0x7F800000u;  // exponent all ones, fraction 0
inline constexpr int kF32FracBits = 23;
inline constexpr int kF32Bias = 127;

// True for every NaN (exponent all ones, fraction non-zero), whatever the sign.
MLACHECK_HD constexpr bool is_nan_bits(uint32_t u) noexcept {
  return (u & kF32AbsMask) > kF32InfBits;
}

}  // namespace detail
}  // namespace mlacheck::quant
