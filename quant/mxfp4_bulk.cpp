// Block-32 MXFP4 quantizer and dequantizer (NUMERICS §5).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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

// §5.1-5.2: the block's exponent e. amax over |x| with NaNs ignored (they compare false), Inf wins.
int block_exponent(const float* in) {
  float amax = 0.0f;
  for (std::size_t j = 0; j < kMxfp4BlockSize; ++j) {
    const float a = f32_from_bits(f32_bits(in[j]) & detail::kF32AbsMask);
    amax = a > amax ? a : amax;
  }
  return mxfp4_block_exponent(amax);
}

// f32_to_e2m1 of every float32 whose low 16 bits are zero, by rounding, indexed by the high 16.
// For a bf16 input (the KV caches) qx = x * 2^-e is such a float unless it is a float32
// subnormal: the lookup replaces the conversion and gives its result by construction. perf of
// `ref --recipes a16w4` on 16 x 8192, which quantizes each MXFP4 row as it reads it:
// quantize_block 45 % of the samples with the conversion, 19 % with the lookup.
constexpr std::size_t kHighHalves = std::size_t{1} << 16;
const uint8_t* e2m1_of_high_half(E2M1Rounding rounding) {
  static const std::vector<uint8_t> tables = [] {
    std::vector<uint8_t> t(2 * kHighHalves);
    for (std::size_t h = 0; h < kHighHalves; ++h) {
      const float v = f32_from_bits(static_cast<uint32_t>(h) << 16);
      t[h] = f32_to_e2m1(v, E2M1Rounding::rne);
      t[kHighHalves + h] = f32_to_e2m1(v, E2M1Rounding::ties_away);
    }
    return t;
  }();
  return tables.data() + (rounding == E2M1Rounding::rne ? 0 : kHighHalves);
}

uint8_t e2m1_code(float qx, E2M1Rounding rounding, const uint8_t* by_high_half) {
  const uint32_t u = f32_bits(qx);
  return (u & 0xFFFFu) == 0 ? by_high_half[u >> 16] : f32_to_e2m1(qx, rounding);
}

// One block of 32 elements: its scale byte and 16 packed bytes.
void quantize_block(const float* in, E2M1Rounding rounding, const uint8_t* by_high_half,
                    uint8_t* out, uint8_t* scale) {
  const int e = block_exponent(in);
  *scale = e8m0_from_exponent(e);
  const float qs = block_multiplier(e);
  // qx = fl32(x * qs) (§5.3), NaN bits as on AMD (§5.8).
  for (std::size_t j = 0; j < kMxfp4BlockSize; j += 2) {  // §5.5: low nibble = even element
    const uint8_t lo = e2m1_code(detail::mul_amd_nan(in[j], qs), rounding, by_high_half);
    const uint8_t hi = e2m1_code(detail::mul_amd_nan(in[j + 1], qs), rounding, by_high_half);
    out[j / 2] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

void check_sizes(const char* func, std::size_t elements, std::size_t row_len, std::size_t packed,
                 std::size_t scales) {
  detail::require_rows(func, elements, row_len, kMxfp4BlockSize);
  detail::require_size(func, "packed", packed, elements / 2, "two E2M1 codes per byte");
  detail::require_size(func, "scales", scales, elements / kMxfp4BlockSize,
                       "one E8M0 byte per 32 elements");
}

}  // namespace

void mxfp4_quantize(std::span<const float> x, std::size_t row_len, E2M1Rounding rounding,
                    std::span<uint8_t> packed, std::span<uint8_t> scales) {
  check_sizes("mxfp4_quantize", x.size(), row_len, packed.size(), scales.size());
  const std::size_t blocks = x.size() / kMxfp4BlockSize;
  const uint8_t* by_high_half = e2m1_of_high_half(rounding);
#pragma omp parallel for schedule(static) if (x.size() >= detail::kMinParallelWork)
  for (std::size_t b = 0; b < blocks; ++b)
    quantize_block(x.data() + b * kMxfp4BlockSize, rounding, by_high_half,
                   packed.data() + b * (kMxfp4BlockSize / 2), scales.data() + b);
}

void mxfp4_quantize_row(std::span<const float> x, E2M1Rounding rounding, std::span<uint8_t> packed,
                        std::span<uint8_t> scales) {
  check_sizes("mxfp4_quantize_row", x.size(), x.size(), packed.size(), scales.size());
  const uint8_t* by_high_half = e2m1_of_high_half(rounding);
  for (std::size_t b = 0; b < x.size() / kMxfp4BlockSize; ++b)
    quantize_block(x.data() + b * kMxfp4BlockSize, rounding, by_high_half,
                   packed.data() + b * (kMxfp4BlockSize / 2), scales.data() + b);
}

void mxfp4_scales(std::span<const float> x, std::size_t row_len, std::span<uint8_t> scales) {
  check_sizes("mxfp4_scales", x.size(), row_len, x.size() / 2, scales.size());
  const std::size_t blocks = x.size() / kMxfp4BlockSize;
#pragma omp parallel for schedule(static) if (x.size() >= detail::kMinParallelWork)
  for (std::size_t b = 0; b < blocks; ++b)
    scales[b] = e8m0_from_exponent(block_exponent(x.data() + b * kMxfp4BlockSize));
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
