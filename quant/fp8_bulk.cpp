// Per-tensor FP8 quantizers (NUMERICS §4 harness, §4.1 aiter dynamic/static, plain cast).
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/bulk.h"
#include "quant/fp8.h"
#include "quant/nan_semantics.h"
#include "quant/bulk_common.h"

namespace mlacheck::quant {
namespace {

// fl32(1/M) (NUMERICS §4 step 3 and §4.1): one IEEE division, as PyTorch and aiter compute it.
constexpr float reciprocal_of_max(Fp8Format fmt) { return 1.0f / fp8_max(fmt); }
static_assert(f32_bits(reciprocal_of_max(Fp8Format::e4m3fn)) == 0x3B124925u);    // §4 step 3
static_assert(f32_bits(reciprocal_of_max(Fp8Format::e4m3fnuz)) == 0x3B888889u);  // §4 step 3

// bf16(1e-12) = 0x2B8D, the harness's clamp(min=1e-12) bound (§4 step 2).
constexpr uint16_t kHarnessAmaxFloorBf16 = 0x2B8D;
constexpr uint16_t kBf16AbsMask = 0x7FFF;

// Clamp to [-m, m]; NaN passes through (every comparison with it is false).
constexpr float clamp_symmetric(float v, float m) { return v > m ? m : (v < -m ? -m : v); }

// The aiter element rule (§4.1): t = fl32(x * inv), clamp ±M, RNE to FP8. A NaN t (NaN x, or
// ±Inf x with inv = 0) is passed through the clamp (v_med3's NaN behaviour is not established)
// with AMD's NaN bits, so its code's sign is fixed: the NaN input's, or + for Inf * 0.
void encode_scaled(std::span<const float> x, float inv, Fp8Format fmt, std::span<uint8_t> codes) {
  const float m = fp8_max(fmt);
  const std::size_t n = x.size();
#pragma omp parallel for schedule(static) if (n >= detail::kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i)
    codes[i] = f32_to_fp8(clamp_symmetric(detail::mul_amd_nan(x[i], inv), m), fmt, Overflow::nan);
}

// Rows that take part in the scale; the others are quantized as +0. Empty = every row.
struct RowsRead {
  const std::vector<bool>* read = nullptr;
  std::size_t row_len = 1;
  bool operator()(std::size_t element) const { return read == nullptr || (*read)[element / row_len]; }
};

// NUMERICS §4 steps 1-3: the scale s as float32 (exactly a bf16 value).
float harness_scale(std::span<const uint16_t> x_bf16, Fp8Format fmt, RowsRead rows = {}) {
  const std::size_t n = x_bf16.size();
  // Step 1: amax of |x| in bf16. On magnitudes the integer order is the value order, and every
  // NaN (> 0x7F80) exceeds every number, so the integer max is NaN iff some element is NaN.
  unsigned amax = 0;
#pragma omp parallel for schedule(static) reduction(max : amax) if (n >= detail::kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned mag = rows(i) ? x_bf16[i] & kBf16AbsMask : 0u;
    amax = mag > amax ? mag : amax;
  }
  // Step 2: clamp(min=1e-12); a NaN stays NaN.
  const uint16_t amax_floored =
      amax < kHarnessAmaxFloorBf16 ? kHarnessAmaxFloorBf16 : static_cast<uint16_t>(amax);
  // Step 3: s = bf16(fl32(a' * fl32(1/M))).
  return bf16_to_f32(f32_to_bf16(bf16_to_f32(amax_floored) * reciprocal_of_max(fmt)));
}

// Steps 4-5 of one element: its bf16 value just before the FP8 cast. m = fp8_max(fmt), exactly
// representable in bf16 (448, 240).
uint16_t harness_y(uint16_t x, float s_f32, float m) {
  const uint16_t q = f32_to_bf16(bf16_to_f32(x) / s_f32);  // step 4
  return f32_to_bf16(clamp_symmetric(bf16_to_f32(q), m));  // step 5 (exact)
}

// NUMERICS §4, steps 1-7; y (may be null) receives each element's bf16 value after step 5.
float harness_quantize(std::span<const uint16_t> x_bf16, Fp8Format fmt, std::span<uint8_t> codes,
                       uint16_t* y, RowsRead rows = {}) {
  const std::size_t n = x_bf16.size();
  const float s_f32 = harness_scale(x_bf16, fmt, rows);
  const float m = fp8_max(fmt);
#pragma omp parallel for schedule(static) if (n >= detail::kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) {
    const uint16_t yi = harness_y(rows(i) ? x_bf16[i] : uint16_t{0}, s_f32, m);
    if (y != nullptr) y[i] = yi;
    codes[i] = f32_to_fp8(bf16_to_f32(yi), fmt, Overflow::nan);  // step 6
  }
  return s_f32;  // step 7
}

}  // namespace

float fp8_harness_quantize(std::span<const uint16_t> x_bf16, Fp8Format fmt,
                           std::span<uint8_t> codes, std::span<uint16_t> y_bf16) {
  detail::require_size("fp8_harness_quantize", "codes", codes.size(), x_bf16.size(),
                       "one code per input element");
  detail::require_size("fp8_harness_quantize", "y_bf16", y_bf16.size(), x_bf16.size(),
                       "one bf16 value per input element");
  return harness_quantize(x_bf16, fmt, codes, y_bf16.data());
}

float fp8_harness_quantize(std::span<const uint16_t> x_bf16, Fp8Format fmt,
                           std::span<uint8_t> codes) {
  detail::require_size("fp8_harness_quantize", "codes", codes.size(), x_bf16.size(),
                       "one code per input element");
  return harness_quantize(x_bf16, fmt, codes, nullptr);
}

float fp8_harness_quantize_rows(std::span<const uint16_t> x_bf16, std::size_t row_len,
                                const std::vector<bool>& row_read, Fp8Format fmt,
                                std::span<uint8_t> codes) {
  detail::require_rows("fp8_harness_quantize_rows", x_bf16.size(), row_len);
  detail::require_size("fp8_harness_quantize_rows", "codes", codes.size(), x_bf16.size(),
                       "one code per input element");
  detail::require_size("fp8_harness_quantize_rows", "row_read", row_read.size(),
                       x_bf16.size() / row_len, "one flag per row");
  return harness_quantize(x_bf16, fmt, codes, nullptr, RowsRead{&row_read, row_len});
}

float fp8_harness_scale(std::span<const uint16_t> x_bf16, Fp8Format fmt) {
  return harness_scale(x_bf16, fmt);
}

float fp8_harness_scale_rows(std::span<const uint16_t> x_bf16, std::size_t row_len,
                             const std::vector<bool>& row_read, Fp8Format fmt) {
  detail::require_rows("fp8_harness_scale_rows", x_bf16.size(), row_len);
  detail::require_size("fp8_harness_scale_rows", "row_read", row_read.size(),
                       x_bf16.size() / row_len, "one flag per row");
  return harness_scale(x_bf16, fmt, RowsRead{&row_read, row_len});
}

std::vector<uint8_t> fp8_harness_code_table(float scale, Fp8Format fmt) {
  std::vector<uint8_t> table(kBf16Patterns);
  const float m = fp8_max(fmt);
  for (std::size_t x = 0; x < kBf16Patterns; ++x) {  // step 6 of step 5's value, as harness_quantize
    const uint16_t y = harness_y(static_cast<uint16_t>(x), scale, m);
    table[x] = f32_to_fp8(bf16_to_f32(y), fmt, Overflow::nan);
  }
  return table;
}

float fp8_dynamic_quantize(std::span<const float> x, std::size_t row_len, Fp8Format fmt,
                           std::span<uint8_t> codes) {
  detail::require_rows("fp8_dynamic_quantize", x.size(), row_len);
  detail::require_size("fp8_dynamic_quantize", "codes", codes.size(), x.size(),
                       "one code per input element");
  const std::size_t rows = x.size() / row_len;
  const float recip = reciprocal_of_max(fmt);

  // Tensor scale = max over rows of fl32(rowAbsMax * fl32(1/M)), starting from 0. NaN-free, so
  // the max is exact and independent of the reduction order.
  float scale = 0.0f;
#pragma omp parallel for schedule(static) \
    reduction(max                         \
              : scale) if (x.size() >= detail::kMinParallelWork)
  for (std::size_t r = 0; r < rows; ++r) {
    float abs_max = 0.0f;
    for (std::size_t j = 0; j < row_len; ++j) {
      const float a = f32_from_bits(f32_bits(x[r * row_len + j]) & detail::kF32AbsMask);
      abs_max = a > abs_max ? a : abs_max;  // a NaN compares false and is skipped
    }
    const float row_scale = abs_max * recip;
    scale = row_scale > scale ? row_scale : scale;
  }
  // All-zero input: inv = 0 rather than 1/0 (see bulk.h), so the codes are signed zeros.
  const float inv = scale == 0.0f ? 0.0f : 1.0f / scale;
  encode_scaled(x, inv, fmt, codes);
  return scale;
}

void fp8_static_quantize(std::span<const float> x, float scale, Fp8Format fmt,
                         std::span<uint8_t> codes) {
  detail::require_size("fp8_static_quantize", "codes", codes.size(), x.size(),
                       "one code per input element");
  const uint32_t bits = f32_bits(scale);
  if ((bits & detail::kF32SignMask) != 0 || (bits & detail::kF32AbsMask) == 0 ||
      (bits & detail::kF32AbsMask) >= detail::kF32InfBits)
    throw std::invalid_argument("fp8_static_quantize: the scale must be finite and > 0, got " +
                                std::to_string(scale));
  encode_scaled(x, 1.0f / scale, fmt, codes);
}

void fp8_cast(std::span<const float> x, Fp8Format fmt, Overflow overflow,
              std::span<uint8_t> codes) {
  detail::require_size("fp8_cast", "codes", codes.size(), x.size(), "one code per input element");
  const std::size_t n = x.size();
#pragma omp parallel for schedule(static) if (n >= detail::kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) codes[i] = f32_to_fp8(x[i], fmt, overflow);
}

}  // namespace mlacheck::quant
