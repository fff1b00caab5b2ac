#pragma once
// Products whose NaN result bits mlacheck fixes instead of leaving them to the CPU (x86 would
// give the negative default NaN 0xFFC00000 for Inf * 0). The rule is AMD's ([AMD, inferred],
// NUMERICS §5.3 and §5.8): a NaN operand comes out with its own payload and sign, quieted; an
// invalid operation (±Inf * 0) gives the default NaN 0x7FC00000.
#include <cstdint>

#include "quant/bits.h"
#include "quant/hd.h"

namespace mlacheck::quant::detail {

inline constexpr uint32_t kF32QuietBit = 0x00400000u;
inline constexpr uint32_t kAmdDefaultNaN = 0x7FC00000u;

MLACHECK_HD constexpr bool is_inf_bits(uint32_t u) noexcept {
  return (u & kF32AbsMask) == kF32InfBits;
}
MLACHECK_HD constexpr bool is_zero_bits(uint32_t u) noexcept { return (u & kF32AbsMask) == 0; }

// fl32(x * y) with AMD NaN bits. The one floating-point operation of the scalar codecs: a device
// build with denormal flushing (--use_fast_math, -fgpu-flush-denormals-to-zero) flushes float32
// subnormal operands and results here, the CPU does not.
MLACHECK_HD constexpr float mul_amd_nan(float x, float y) noexcept {
  const uint32_t ux = f32_bits(x);
  const uint32_t uy = f32_bits(y);
  if (is_nan_bits(ux)) return f32_from_bits(ux | kF32QuietBit);
  if (is_nan_bits(uy)) return f32_from_bits(uy | kF32QuietBit);
  if ((is_inf_bits(ux) && is_zero_bits(uy)) || (is_zero_bits(ux) && is_inf_bits(uy)))
    return f32_from_bits(kAmdDefaultNaN);
  return x * y;
}

}  // namespace mlacheck::quant::detail
