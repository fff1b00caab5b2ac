#include "ref/fp8_mma.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "quant/fp8.h"
#include "quant/formats.h"

namespace mlacheck::ref {
namespace {

// 2^e as a double, for e in double's normal range (the model's exponents stay within -200 .. 200).
double pow2(int e) { return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52); }

// floor(log2 |x|) of a non-zero float: its exponent field for normal floats (every fp8 value and
// product of two is one), std::ilogb for the rest.
int exponent_of(float x) {
  const int biased = static_cast<int>(std::bit_cast<uint32_t>(x) >> 23 & 0xFF);
  return biased != 0 ? biased - 127 : std::ilogb(x);
}

// x kept to `bits` mantissa bits: truncated by clearing the bits below them (x is a normal double),
// or rounded to nearest even.
double keep_mantissa(double x, int bits, bool nearest) {
  if (x == 0) return 0;
  if (!nearest) {
    const uint64_t below = (uint64_t{1} << (52 - bits)) - 1;
    return std::bit_cast<double>(std::bit_cast<uint64_t>(x) & ~below);
  }
  const double unit = pow2(std::ilogb(x) - bits);
  return std::nearbyint(x / unit) * unit;  // nearbyint: the default mode, to nearest even
}

// x · 2^s cut to an integer (toward zero, or toward -inf with kFloor), by conversion to int64
// (cvttsd2si: SSE2, where std::trunc needs SSE4.1 or a call).
template <bool kFloor>
int64_t cut(double x) {
  const auto q = static_cast<int64_t>(x);  // toward zero
  return kFloor && static_cast<double>(q) > x ? q - 1 : q;
}

// Σ cut(x[k] · scale) of the group's products a[k]·b[k]. Each product is exact in float, each
// scaled one exact in double (a power of two), each cut term an integer below 2^(bits + 2), so the
// sum (with C's term, close_step) is exact in int64 and in double (65 terms, bits <= 44).
template <bool kFloor>
int64_t aligned_products(const float* a, const float* b, int64_t n, double scale) {
  int64_t total = 0;
  for (int64_t k = 0; k < n; ++k) total += cut<kFloor>(static_cast<double>(a[k] * b[k]) * scale);
  return total;
}

// The accumulator after a K step: `largest` is the step's alignment exponent (C's included where
// it is aligned; INT_MIN: no aligned term), `products` its products' cut terms summed, in units of
// 2^(largest - bits).
float close_step(float acc, int largest, int64_t products, bool c_aligned, const Fp8MmaModel& model) {
  double sum = acc;
  if (largest != INT_MIN) {  // else every aligned term is zero: only C, if not aligned, is left
    const double scale = pow2(model.bits - largest);
    const int64_t c_term =
        !c_aligned ? 0 : model.toward_floor ? cut<true>(acc * scale) : cut<false>(acc * scale);
    sum = static_cast<double>(products + c_term) * pow2(largest - model.bits);  // exact: a power of two
    if (!model.align_c) sum += acc;
  }
  return static_cast<float>(keep_mantissa(sum, model.final_bits, model.final_nearest));
}

// The bits of 2^e as a float, for e in float's normal range.
uint32_t pow2f_bits(int32_t e) { return static_cast<uint32_t>(e + 127) << 23; }

// One K step of fp8_mma_accumulate_e4m3: `width` (<= 32) products on each of the kFp8MmaLanes
// lanes. The alignment and the terms are fp8_mma_accumulate's, from the exponents given, in
// float32 and int32, lane by lane without a branch, so the loops over the products run whole
// vectors across the lanes (GCC 12 keeps the per-lane set-up between them scalar):
// - a product of e4m3fn values (<= 8 significant bits) is exact in float, and so is its scaled term
//   unless that falls below float's normals, where it is below 1 and cut to 0 either way;
//   |term| < 2^(bits + 2) = 2^15, so 32 terms and C's (< 2^14) sum exactly in int32;
// - that sum, below 2^21, is exact in float, and clearing its low 23 - final_bits mantissa bits
//   truncates it to final_bits as keep_mantissa does; times 2^(largest - bits) it stays exact
//   while largest is within kPlainExponent (a product's is -12 .. 16).
// A lane whose C lies outside 2^±kPlainExponent (float subnormals, Inf, NaN, huge values) takes
// fp8_mma_accumulate's own path for the step instead.
void e4m3_step(float* __restrict c, const float* __restrict a, const int32_t* __restrict ea,
               int64_t a_stride, const float* __restrict b, const int32_t* __restrict eb, int64_t ldb,
               int64_t width) {
  constexpr Fp8MmaModel m = kSm90Fp8Mma;
  static_assert(m.align_c && !m.toward_floor && !m.final_nearest && m.align_by_factors &&
                m.factor_min_exponent == kE4m3MinExponent && m.group == kFp8MmaKStep);
  constexpr int kLanes = kFp8MmaLanes;
  constexpr int32_t kPlainExponent = 100;  // 2^±(100 + bits) stay within float's normals
  constexpr int32_t kNone = 2 * kZeroFactorExponent;  // no aligned term
  constexpr int kFloatMantissa = 23;
  constexpr uint32_t kCutMask = ~((uint32_t{1} << (kFloatMantissa - m.final_bits)) - 1);
  int32_t most[kLanes];
  for (int j = 0; j < kLanes; ++j) most[j] = kNone;
  for (int64_t k = 0; k < width; ++k) {
    const int32_t e = ea[k * a_stride];
    for (int j = 0; j < kLanes; ++j) most[j] = std::max(most[j], e + eb[k * ldb + j]);
  }
  // Per lane, without a branch: C's exponent field, whether C is plain (0, or within
  // 2^±kPlainExponent), the step's alignment exponent, the scale onto its grid and back.
  float scale[kLanes], unit[kLanes], c_plain[kLanes];
  int32_t odd = 0;
  for (int j = 0; j < kLanes; ++j) {
    const uint32_t bits = std::bit_cast<uint32_t>(c[j]);
    const int32_t c_exponent = static_cast<int32_t>(bits >> kFloatMantissa & 0xFF) - 127;
    const int32_t zero = (bits << 1) == 0;  // ±0
    const int32_t plain = zero | ((c_exponent >= -kPlainExponent) & (c_exponent <= kPlainExponent));
    odd |= plain ^ 1;
    // most >= -12: some product is non-zero (else a zero factor in each)
    const int32_t products = most[j] >= 2 * kE4m3MinExponent ? most[j] : kNone;
    const int32_t largest = std::max(products, (zero | (plain ^ 1)) != 0 ? kNone : c_exponent);
    const int32_t at = largest == kNone ? 0 : largest;  // no term: any scale gives 0
    const uint32_t keep = 0u - static_cast<uint32_t>(plain);  // all ones for a plain C
    // scale 0 for an odd C: its lane's terms are recomputed below
    scale[j] = std::bit_cast<float>(pow2f_bits(m.bits - at) & keep);
    unit[j] = std::bit_cast<float>(pow2f_bits(at - m.bits));
    c_plain[j] = std::bit_cast<float>(bits & keep);
  }
  int32_t total[kLanes];
  for (int j = 0; j < kLanes; ++j) total[j] = static_cast<int32_t>(c_plain[j] * scale[j]);
  for (int64_t k = 0; k < width; ++k) {
    const float x = a[k * a_stride];
    for (int j = 0; j < kLanes; ++j) total[j] += static_cast<int32_t>(x * b[k * ldb + j] * scale[j]);
  }
  float old[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    old[j] = c[j];
    const uint32_t kept = std::bit_cast<uint32_t>(static_cast<float>(total[j])) & kCutMask;
    c[j] = std::bit_cast<float>(kept) * unit[j];
  }
  if (odd == 0) return;
  for (int j = 0; j < kLanes; ++j) {
    if (scale[j] != 0) continue;
    float x[kFp8MmaKStep], y[kFp8MmaKStep];
    for (int64_t k = 0; k < width; ++k) {
      x[k] = a[k * a_stride];
      y[k] = b[k * ldb + j];
    }
    c[j] = fp8_mma_accumulate(old[j], x, y, width, m);
  }
}

}  // namespace

// Every step exact (aligned_products, close_step), and no term needs decoding beyond its exponent
// field. The emulation sums its e4m3fn operands with fp8_mma_accumulate_e4m3 (below), 16 sums at a
// time, and comes here for other operands and for a C outside 2^±100, float32 subnormals among them.
float fp8_mma_accumulate(float c, const float* a, const float* b, int64_t n, const Fp8MmaModel& model) {
  constexpr int kMaxGroup = 64;  // a K step is 32 (the fit tries 4 .. 32); 65 terms keep sums exact
  constexpr int kMaxBits = 44;   // keeps a group's sum of cut terms below 2^53 (above)
  if (model.group < 1 || model.group > kMaxGroup)
    throw std::invalid_argument("fp8_mma_accumulate: group " + std::to_string(model.group) + " not in 1 .. 64");
  if (model.bits < 1 || model.bits > kMaxBits)
    throw std::invalid_argument("fp8_mma_accumulate: bits " + std::to_string(model.bits) + " not in 1 .. 44");
  if (model.final_bits < 1 || model.final_bits > 52)
    throw std::invalid_argument("fp8_mma_accumulate: final_bits " + std::to_string(model.final_bits) +
                                " not in 1 .. 52");
  const auto factor_exponent = [&](float x) { return std::max(exponent_of(x), model.factor_min_exponent); };
  float acc = c;
  for (int64_t k0 = 0; k0 < n; k0 += model.group) {
    const int64_t width = std::min<int64_t>(model.group, n - k0);
    const float* ga = a + k0;
    const float* gb = b + k0;
    int largest = INT_MIN;  // the largest alignment exponent among the group's non-zero terms
    for (int64_t k = 0; k < width; ++k) {
      const float product = ga[k] * gb[k];
      if (product == 0) continue;
      largest = std::max(largest, model.align_by_factors ? factor_exponent(ga[k]) + factor_exponent(gb[k])
                                                         : exponent_of(product));
    }
    const bool c_aligned = model.align_c && acc != 0;
    if (c_aligned) largest = std::max(largest, exponent_of(acc));
    int64_t products = 0;
    if (largest != INT_MIN) {
      const double scale = pow2(model.bits - largest);
      products = model.toward_floor ? aligned_products<true>(ga, gb, width, scale)
                                    : aligned_products<false>(ga, gb, width, scale);
    }
    acc = close_step(acc, largest, products, c_aligned, model);
  }
  return acc;
}

bool e4m3_factor_exponents(const float* x, int64_t n, int32_t* exponent) {
  constexpr auto kFormat = quant::Fp8Format::e4m3fn;
  constexpr quant::FormatInfo kInfo = quant::format_info(quant::elem_format(kFormat));
  static_assert(kE4m3MinExponent == 1 - kInfo.bias);
  constexpr uint8_t kMagnitude = 0x7F;  // a code without its sign bit
  bool all = true;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t code = quant::f32_to_fp8(x[i], kFormat);
    all = all && quant::fp8_to_f32(code, kFormat) == x[i];  // NaN != NaN
    const int field = (code & kMagnitude) >> kInfo.mant_bits;  // 0: zero or subnormal
    exponent[i] = (code & kMagnitude) == 0 ? kZeroFactorExponent : std::max(field, 1) - kInfo.bias;
  }
  return all;
}

void fp8_mma_accumulate_e4m3(float* c, const float* a, const int32_t* a_exponent, int64_t a_stride,
                             const float* b, const int32_t* b_exponent, int64_t ldb, int64_t n) {
  for (int64_t k0 = 0; k0 < n; k0 += kFp8MmaKStep)
    e4m3_step(c, a + k0 * a_stride, a_exponent + k0 * a_stride, a_stride, b + k0 * ldb,
              b_exponent + k0 * ldb, ldb, std::min<int64_t>(kFp8MmaKStep, n - k0));
}

}  // namespace mlacheck::ref
