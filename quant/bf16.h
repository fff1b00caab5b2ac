#pragma once
// float32 <-> bfloat16 (NUMERICS §2).
#include <cstdint>

#include "quant/bits.h"
#include "quant/hd.h"

namespace mlacheck::quant {

// The quiet NaN mlacheck writes for any NaN input: c10's scalar conversion, which PyTorch on ROCm
// (the MI355X harness) uses; sign and payload dropped (NUMERICS Decisions table, §2.1).
inline constexpr uint16_t kBf16NaN = 0x7FC0;

// Round to nearest even on the top 16 bits, integer form of §2.1: ±0 and ±Inf keep their sign,
// float32 subnormals round like any other value, a carry out of 0x7F7F gives Inf.
MLACHECK_HD constexpr uint16_t f32_to_bf16(float x) noexcept {
  const uint32_t u = f32_bits(x);
  if (detail::is_nan_bits(u)) return kBf16NaN;
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Finite (not NaN or ±Inf): the exponent field is not all ones.
MLACHECK_HD constexpr bool bf16_is_finite(uint16_t b) noexcept { return (b & 0x7F80u) != 0x7F80u; }

// Exact widening (§2.2); NaN payloads are kept.
MLACHECK_HD constexpr float bf16_to_f32(uint16_t b) noexcept {
  return f32_from_bits(static_cast<uint32_t>(b) << 16);
}

}  // namespace mlacheck::quant
