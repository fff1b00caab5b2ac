#include "tests/quant/reference_codecs.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace mlacheck::quant::testing {
namespace {

constexpr int bias_of(Fp8Format f) { return f == Fp8Format::e4m3fnuz ? 8 : 7; }  // §3.1

// Value of a 7-bit magnitude pattern read as e4m3 with the given bias, ignoring NaN rules, so the
// pattern one past the max also has a value (the overflow sentinel).
double e4m3_pattern_value(unsigned mag, int bias) {
  const int e = static_cast<int>(mag >> 3);
  const int m = static_cast<int>(mag & 7u);
  if (e == 0) return std::ldexp(m, 1 - bias - 3);
  if (e == 16) return std::ldexp(1.0, 16 - bias);  // only the fnuz sentinel 0x80 reaches here
  return std::ldexp(8 + m, e - bias - 3);
}

}  // namespace

double ref_fp8_value(uint8_t code, Fp8Format f) {
  const bool neg = (code & 0x80u) != 0;
  if (f == Fp8Format::e4m3fnuz && code == 0x80) return std::numeric_limits<double>::quiet_NaN();
  if (f == Fp8Format::e4m3fn && (code & 0x7Fu) == 0x7F)
    return std::numeric_limits<double>::quiet_NaN();
  const double v = e4m3_pattern_value(code & 0x7Fu, bias_of(f));
  return neg ? -v : v;
}

uint8_t ref_fp8_encode(float x, Fp8Format f, Overflow o) {
  const bool fnuz = f == Fp8Format::e4m3fnuz;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const uint8_t nan_code = fnuz ? 0x80 : static_cast<uint8_t>(0x7F | sign);
  if (std::isnan(x)) return nan_code;
  const unsigned max_mag = fnuz ? 0x7F : 0x7E;
  const unsigned sentinel = max_mag + 1;  // first grid point past the max
  const double a = std::fabs(static_cast<double>(x));

  unsigned best = 0;
  // At or beyond the sentinel nothing else is nearer (and far beyond it the double distances to
  // the top codes round to the same value, which would fake a tie).
  if (std::isinf(x) || a >= e4m3_pattern_value(sentinel, bias_of(f))) {
    best = sentinel;
  } else {
    double best_dist = std::numeric_limits<double>::infinity();
    for (unsigned c = 0; c <= sentinel; ++c) {
      const double d = std::fabs(a - e4m3_pattern_value(c, bias_of(f)));
      const bool tie_to_even = d == best_dist && (c & 1u) == 0;  // even mantissa wins a tie
      if (d < best_dist || tie_to_even) {
        best = c;
        best_dist = d;
      }
    }
  }
  if (best == sentinel)
    return o == Overflow::saturate ? static_cast<uint8_t>(max_mag | sign) : nan_code;
  if (best == 0 && fnuz) return 0x00;
  return static_cast<uint8_t>(best | sign);
}

double ref_e2m1_value(uint8_t code) {
  static constexpr double kMagnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  const double v = kMagnitudes[code & 7u];
  return (code & 8u) != 0 ? -v : v;
}

uint8_t ref_e2m1_encode(float qx, E2M1Rounding r) {
  const uint8_t sign = std::signbit(qx) ? 8 : 0;
  // Saturation at 6 under both rules (and far beyond 6 the double distances to the top codes
  // would round to the same value and fake a tie).
  if (std::isinf(qx) || std::fabs(qx) >= 6.0f) return 7 | sign;
  const double a = std::fabs(static_cast<double>(qx));
  if (r == E2M1Rounding::ties_away && a < std::ldexp(1.0, -32)) {
    // §5.3 "Tiny elements in the old rule", AMD: with E the biased float32 exponent and F the
    // fraction, E in {94, 62, 30} gives 0.5 if F < 2^22 else 1.0, E in {93, 61, 29} gives 0.5,
    // every other tiny exponent (zero and subnormals included) gives 0.
    int exp2 = 0;
    const double frac = std::frexp(a, &exp2);  // a = frac * 2^exp2, frac in [0.5, 1)
    const int biased = a == 0.0 ? 0 : exp2 - 1 + 127;
    if (biased >= 1) {
      const bool high_half = frac >= 0.75;  // the fraction's top bit: F >= 2^22
      if (biased == 94 || biased == 62 || biased == 30) return (high_half ? 2 : 1) | sign;
      if (biased == 93 || biased == 61 || biased == 29) return 1 | sign;
    }
    return sign;
  }
  unsigned best = 0;
  double best_dist = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c < 8; ++c) {
    const double d = std::fabs(a - ref_e2m1_value(static_cast<uint8_t>(c)));
    bool wins = d < best_dist;
    if (d == best_dist) wins = r == E2M1Rounding::rne ? (c & 1u) == 0 : true;  // c ascends
    if (wins) {
      best = c;
      best_dist = d;
    }
  }
  return static_cast<uint8_t>(best | sign);
}

int ref_block_exponent(float amax) {
  if (std::isinf(amax)) return 127;
  if (amax == 0.0f) return -127;
  int exp2 = 0;
  const double frac = std::frexp(static_cast<double>(amax), &exp2);  // amax = frac * 2^exp2
  const int log2_r = frac >= 0.875 ? exp2 : exp2 - 1;  // significand 2*frac >= 1.75 rounds up
  if (log2_r > 127) return 127;                        // r = 2^128 is +Inf in float32
  const int e = log2_r - 2;
  return e < -127 ? -127 : (e > 127 ? 127 : e);
}

}  // namespace mlacheck::quant::testing
