#include "ref/fp8_mma.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

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

// Σ cut(x[k] · scale) of the group's products a[k]·b[k] (and, with_c, of c), cut = trunc or floor.
// Each product is exact in float, each scaled one exact in double (a power of two), each cut term
// an integer below 2^(bits + 2), so the sum is exact in int64 and in double (65 terms, bits <= 44).
// The cut by conversion to int64 (cvttsd2si: SSE2, where std::trunc needs SSE4.1 or a call).
template <bool kFloor>
double aligned_sum(const float* a, const float* b, int64_t n, double c, bool with_c, double scale) {
  const auto cut = [](double x) {
    const auto q = static_cast<int64_t>(x);  // toward zero
    return kFloor && static_cast<double>(q) > x ? q - 1 : q;
  };
  int64_t total = with_c ? cut(c * scale) : 0;
  for (int64_t k = 0; k < n; ++k) total += cut(static_cast<double>(a[k] * b[k]) * scale);
  return static_cast<double>(total);
}

}  // namespace

// Every step exact (aligned_sum, keep_mantissa), and no term needs decoding beyond its exponent
// field, so a K step costs a few instructions a product (the emulation calls this for
// every product of an fp8-acc tc64 / tc recipe).
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
    double sum = acc;
    if (largest != INT_MIN) {  // else every aligned term is zero: only C, if not aligned, is left
      const double scale = pow2(model.bits - largest);
      const double total = model.toward_floor ? aligned_sum<true>(ga, gb, width, acc, c_aligned, scale)
                                              : aligned_sum<false>(ga, gb, width, acc, c_aligned, scale);
      sum = total * pow2(largest - model.bits);  // exact: a power of two
      if (!model.align_c) sum += acc;
    }
    acc = static_cast<float>(keep_mantissa(sum, model.final_bits, model.final_nearest));
  }
  return acc;
}

}  // namespace mlacheck::ref
