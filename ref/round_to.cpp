#include "ref/round_to.h"

#include <cstdint>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/fp8.h"
#include "quant/grid.h"

namespace mlacheck::ref {
namespace {
constexpr int kF16MantBits = 10;
constexpr int kF16Bias = 15;
constexpr uint32_t kF16MaxMagnitude = 0x7BFF;  // 65504
}  // namespace

float round_to_bf16(float x) { return quant::bf16_to_f32(quant::f32_to_bf16(x)); }

float round_to_f16(float x) {
  const uint32_t u = quant::f32_bits(x);
  if (quant::detail::is_nan_bits(u)) return x;
  const uint32_t sign = u & quant::detail::kF32SignMask;
  const uint32_t mag =
      quant::detail::round_magnitude_rne(u & quant::detail::kF32AbsMask, kF16MantBits, kF16Bias);
  if (mag > kF16MaxMagnitude) return quant::f32_from_bits(sign | quant::detail::kF32InfBits);
  return quant::f32_from_bits(sign | quant::detail::decode_magnitude(mag, kF16MantBits, kF16Bias));
}

float round_to_fp8(float x, quant::Fp8Format f) {
  return quant::fp8_to_f32(quant::f32_to_fp8(x, f), f);
}

float round_to(problem::PFormat p, quant::Fp8Format f, float x) {
  switch (p) {
    case problem::PFormat::f32: return x;
    case problem::PFormat::bf16: return round_to_bf16(x);
    case problem::PFormat::f16: return round_to_f16(x);
    case problem::PFormat::fp8: return round_to_fp8(x, f);
  }
  return x;
}

}  // namespace mlacheck::ref
