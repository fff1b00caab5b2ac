#include "check/ulp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>

#include <fmt/core.h>

#include "quant/formats.h"

namespace mlacheck::check {
namespace {
constexpr uint16_t kBf16SignBit = 0x8000;
// bf16's layout comes from quant's format table, not from literals here.
constexpr quant::FormatInfo kBf16 = quant::format_info(quant::ElemFormat::bf16);
}  // namespace

int32_t bf16_ordinal(uint16_t bits) {
  const int32_t magnitude = bits & static_cast<uint16_t>(~kBf16SignBit);
  return (bits & kBf16SignBit) != 0 ? -magnitude : magnitude;
}

uint32_t bf16_ulp_distance(uint16_t a, uint16_t b) {
  return static_cast<uint32_t>(std::abs(bf16_ordinal(a) - bf16_ordinal(b)));
}

double bf16_ulp(double x) {
  const int min_exp = 1 - kBf16.bias;  // exponent of the smallest normal, 2^-126
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| = m * 2^e with m in [0.5, 1): binade exponent e - 1
  const int binade = x == 0.0 ? min_exp : std::max(e - 1, min_exp);
  return std::ldexp(1.0, binade - kBf16.mant_bits);
}

int UlpHistogram::bucket(uint32_t ulps) {
  if (ulps == 0) return 0;
  // 1 -> 1, 2 -> 2, 3..4 -> 3, 5..8 -> 4: one plus the bits needed for ulps - 1.
  return 1 + static_cast<int>(std::bit_width(ulps - 1));
}

void UlpHistogram::add(uint32_t ulps) {
  const int b = bucket(ulps);
  ++count[static_cast<std::size_t>(b < kBuckets ? b : kBuckets - 1)];
  if (ulps > max) max = ulps;
}

std::string UlpHistogram::label(int b) {
  if (b <= 2) return std::to_string(b);
  const uint32_t hi = 1u << (b - 1), lo = (1u << (b - 2)) + 1;
  return fmt::format("{}-{}", lo, hi);
}

}  // namespace mlacheck::check
