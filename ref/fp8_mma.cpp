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

// A float as sign, integer significand and the exponent of its last bit: |x| = mant * 2^low.
struct Parts {
  uint32_t mant;
  int low;   // exponent of the significand's unit bit
  int lead;  // exponent of its leading bit (ilogb); meaningless for 0
  bool neg;
};
Parts parts(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int biased = static_cast<int>(bits >> 23 & 0xFF);
  const uint32_t frac = bits & 0x7FFFFF;
  Parts p{};
  p.neg = bits >> 31 != 0;
  if (biased == 0) {  // zero or subnormal: 2^-149 units
    p.mant = frac;
    p.low = -149;
    p.lead = frac == 0 ? INT_MIN : p.low + 31 - std::countl_zero(frac);
  } else {
    p.mant = frac | 0x800000u;
    p.low = biased - 150;
    p.lead = p.low + 23;
  }
  return p;
}

// The magnitude of p in units of 2^unit, cut toward zero, or up where toward -inf of a negative
// term drops bits. unit <= lead + 1 so the result has at most lead - unit + 1 <= 64 bits.
int64_t on_grid(const Parts& p, int unit, bool toward_floor) {
  const int shift = p.low - unit;
  if (shift >= 0) return static_cast<int64_t>(static_cast<uint64_t>(p.mant) << shift);
  if (-shift >= 32) return toward_floor && p.neg && p.mant != 0 ? 1 : 0;
  const uint32_t kept = p.mant >> -shift;
  const bool dropped = (kept << -shift) != p.mant;
  return static_cast<int64_t>(kept) + (toward_floor && p.neg && dropped ? 1 : 0);
}

// x kept to `bits` mantissa bits (truncated or rounded to nearest even).
double keep_mantissa(double x, int bits, bool nearest) {
  if (x == 0) return 0;
  const double unit = std::ldexp(1.0, std::ilogb(x) - bits);
  const double q = x / unit;
  return (nearest ? std::nearbyint(q) : std::trunc(q)) * unit;  // nearbyint: the default mode, even
}

}  // namespace

// Integer arithmetic on the floats' bits: the aligned terms are integers in units of 2^(E - bits),
// so a group's sum is exact in int64 and in double (65 terms below 2^(bits + 2) each, bits <= 44).
// Each term is decoded once (the emulation calls this for every product of an fp8-acc=tc64 recipe).
float fp8_mma_accumulate(float c, const float* a, const float* b, int64_t n, const Fp8MmaModel& model) {
  constexpr int kMaxGroup = 64;  // a K step is 32; the fit's search tries 4 .. 32
  constexpr int kMaxBits = 44;   // keeps a group's integer sum below 2^53 (above)
  if (model.group < 1 || model.group > kMaxGroup)
    throw std::invalid_argument("fp8_mma_accumulate: group " + std::to_string(model.group) + " not in 1 .. 64");
  if (model.bits < 1 || model.bits > kMaxBits)
    throw std::invalid_argument("fp8_mma_accumulate: bits " + std::to_string(model.bits) + " not in 1 .. 44");
  const auto factor_exponent = [&](float x) { return std::max(std::ilogb(x), model.factor_min_exponent); };
  Parts terms[kMaxGroup + 1];
  float acc = c;
  for (int64_t k0 = 0; k0 < n; k0 += model.group) {
    const int64_t k1 = std::min(n, k0 + model.group);
    int count = 0;
    int largest = INT_MIN;  // the largest alignment exponent among the group's non-zero terms
    for (int64_t k = k0; k < k1; ++k) {
      const float product = a[k] * b[k];
      if (product == 0) continue;
      terms[count] = parts(product);
      const int at = model.align_by_factors ? factor_exponent(a[k]) + factor_exponent(b[k]) : terms[count].lead;
      largest = std::max(largest, at);
      ++count;
    }
    if (model.align_c && acc != 0) {
      terms[count] = parts(acc);
      largest = std::max(largest, terms[count++].lead);
    }
    double sum = acc;
    if (largest != INT_MIN) {  // else every aligned term is zero: only C, if not aligned, is left
      const int unit = largest - model.bits;
      int64_t total = 0;
      for (int i = 0; i < count; ++i) {
        const int64_t q = on_grid(terms[i], unit, model.toward_floor);
        total += terms[i].neg ? -q : q;
      }
      sum = std::ldexp(static_cast<double>(total), unit);  // exact: |total| < 65 * 2^46 < 2^53
      if (!model.align_c) sum += acc;
    }
    acc = static_cast<float>(keep_mantissa(sum, model.final_bits, model.final_nearest));
  }
  return acc;
}

}  // namespace mlacheck::ref
