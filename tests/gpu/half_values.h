#pragma once
// The exact values of 16-bit float patterns, for the device product tests' double references
// (tests/gpu/mma_test.cpp, tests/gpu/wgmma_test.cpp).
#include <cmath>
#include <cstdint>

#include "quant/bits.h"

namespace mlacheck::gpu::test {

inline double bf16_value(uint16_t h) { return quant::f32_from_bits(static_cast<uint32_t>(h) << 16); }

// Any f16 pattern but Inf and NaN.
inline double f16_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const double mant = h & 0x3FF;
  const double mag = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024.0 + mant, exp - 25);
  return (h & 0x8000) != 0 ? -mag : mag;
}

}  // namespace mlacheck::gpu::test
