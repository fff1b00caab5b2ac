// Block-32 MXFP4 quantizer and dequantizer (NUMERICS §5).
#include <cstddef>
#include <cstdint>
#include <span>

#include "quant/bits.h"
#include "quant/bulk.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/nan_semantics.h"
#include "quant/bulk_common.h"

namespace mlacheck::quant {
namespace {

// 2^-e as float32 (§5.2 step 3); e = 127 would be the subnormal 2^-127, flushed to 0 as on
// NVIDIA (§5.8, see bulk.h).
constexpr float block_multiplier(int e) {
  if (e >= detail::kMxfp4MaxExponent) return 0.0f;
  return f32_from_bits(static_cast<uint32_t>(detail::kF32Bias - e) << detail::kF32FracBits);
}

}  // namespace

void mxfp4_quantize(std::span<const float> x, std::size_t row_len, E2M1Rounding rounding,
                    std::span<uint8_t> packed, std::span<uint8_t> scales) {
  detail::require_rows("mxfp4_quantize", x.size(), row_len, kMxfp4BlockSize);
  detail::require_size("mxfp4_quantize", "packed", packed.size(), x.size() / 2,
                       "two E2M1 codes per byte");
  detail::require_size("mxfp4_quantize", "scales", scales.size(), x.size() / kMxfp4BlockSize,
                       "one E8M0 byte per 32 elements");
  const std::size_t blocks = x.size() / kMxfp4BlockSize;

#pragma omp parallel for schedule(static) if (x.size() >= detail::kMinParallelWork)
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::span<const float> in = x.subspan(b * kMxfp4BlockSize, kMxfp4BlockSize);
    float amax = 0.0f;  // §5.1: NaNs ignored (they compare false), Inf wins
    for (const float v : in) {
      const float a = f32_from_bits(f32_bits(v) & detail::kF32AbsMask);
      amax = a > amax ? a : amax;
    }
    const int e = mxfp4_block_exponent(amax);
    scales[b] = e8m0_from_exponent(e);
    const float qs = block_multiplier(e);
    uint8_t* out = packed.data() + b * (kMxfp4BlockSize / 2);
    // qx = fl32(x * qs) (§5.3), NaN bits as on AMD (§5.8).
    for (std::size_t j = 0; j < kMxfp4BlockSize; j += 2) {  // §5.5: low nibble = even element
      const uint8_t lo = f32_to_e2m1(detail::mul_amd_nan(in[j], qs), rounding);
      const uint8_t hi = f32_to_e2m1(detail::mul_amd_nan(in[j + 1], qs), rounding);
      out[j / 2] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void mxfp4_dequantize(std::span<const uint8_t> packed, std::span<const uint8_t> scales,
                      std::size_t row_len, std::span<float> out) {
  detail::require_rows("mxfp4_dequantize", out.size(), row_len, kMxfp4BlockSize);
  detail::require_size("mxfp4_dequantize", "packed", packed.size(), out.size() / 2,
                       "two E2M1 codes per byte");
  detail::require_size("mxfp4_dequantize", "scales", scales.size(), out.size() / kMxfp4BlockSize,
                       "one E8M0 byte per 32 elements");
  const std::size_t n = out.size();
#pragma omp parallel for schedule(static) if (n >= detail::kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) {
    const uint8_t code = static_cast<uint8_t>((packed[i / 2] >> (4 * (i % 2))) & 0xF);
    out[i] = detail::mul_amd_nan(e2m1_to_f32(code), e8m0_to_f32(scales[i / kMxfp4BlockSize]));
  }
}

}  // namespace mlacheck::quant
