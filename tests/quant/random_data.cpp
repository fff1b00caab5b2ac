#include "tests/quant/random_data.h"

#include <Random123/philox.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <numbers>

#include "quant/bf16.h"
#include "quant/bits.h"

namespace mlacheck::quant::testing {
namespace {

// (0, 1]: never 0, so log() below is finite.
double unit(uint32_t bits) { return (static_cast<double>(bits) + 1.0) / 4294967296.0; }

}  // namespace

uint32_t random_bits(uint64_t seed, uint64_t index) {
  r123::Philox4x32 gen;
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0}};
  const r123::Philox4x32::key_type key = {
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  return gen(ctr, key)[0];
}

std::vector<uint16_t> random_bf16_normal(std::size_t n, uint64_t seed) {
  std::vector<uint16_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Box-Muller from two independent draws.
    const double u1 = unit(random_bits(seed, 2 * i));
    const double u2 = unit(random_bits(seed, 2 * i + 1));
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    out[i] = f32_to_bf16(static_cast<float>(z * 0.02));
  }
  return out;
}

std::vector<float> random_hostile_floats(std::size_t n, uint64_t seed) {
  // Magnitudes that are ties somewhere: E2M1 midpoints and FP8 midpoints (NUMERICS §3, §5.3).
  static constexpr float kTies[] = {0.25f, 0.75f,  1.25f,  1.75f,   2.5f,    3.5f,
                                    5.0f,  464.0f, 248.0f, 1.0625f, 1.1875f, 0.0009765625f};
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t r = random_bits(seed, 3 * i);
    const uint32_t r2 = random_bits(seed, 3 * i + 1);
    const uint32_t block_scale = random_bits(seed ^ 0x5CA1Eu, i / 32) % 200;  // shared per block
    const uint32_t sign = (r2 & 1u) << 31;
    const uint32_t kind = r % 100;
    float x = 0.0f;
    if (kind == 0) {
      x = f32_from_bits(0x7FC00000u | (r2 & 0x3FFFFFu));  // quiet NaN with a payload
    } else if (kind == 1) {
      x = f32_from_bits(sign | 0x7F800001u | (r2 & 0x3FFFFEu));  // signalling NaN
    } else if (kind == 2) {
      x = f32_from_bits(sign | 0x7F800000u);  // ±Inf
    } else if (kind == 3) {
      x = f32_from_bits(sign | 0x7F600000u | (r2 & 0x1FFFFFu));  // >= 0x7F600000: e = 127
    } else if (kind == 4) {
      x = f32_from_bits(sign | (r2 & 0x7FFFFFu));  // float32 subnormal
    } else if (kind == 5) {
      x = f32_from_bits(sign);  // ±0
    } else if (kind < 20) {
      x = std::ldexp(kTies[r2 % std::size(kTies)], static_cast<int>(block_scale) - 100);
      x = sign != 0 ? -x : x;
    } else {
      // A bf16 value with a random fraction and an exponent near the block's.
      const uint32_t e = (block_scale + 27 + (r2 >> 24) % 12) & 0xFFu;
      x = bf16_to_f32(static_cast<uint16_t>((sign >> 16) | (e << 7) | ((r2 >> 8) & 0x7Fu)));
    }
    out[i] = x;
  }
  return out;
}

}  // namespace mlacheck::quant::testing
