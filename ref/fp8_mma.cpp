#include "ref/fp8_mma.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace mlacheck::ref {
namespace {

// A term cut to the grid of `unit` (a power of two): toward zero or toward -inf.
double cut(double x, double unit, bool toward_floor) {
  const double q = x / unit;  // exact: scaling by a power of two
  return (toward_floor ? std::floor(q) : std::trunc(q)) * unit;
}

// x kept to `bits` mantissa bits (truncated or rounded to nearest even).
double keep_mantissa(double x, int bits, bool nearest) {
  if (x == 0) return 0;
  const double unit = std::ldexp(1.0, std::ilogb(x) - bits);
  const double q = x / unit;
  return (nearest ? std::nearbyint(q) : std::trunc(q)) * unit;  // nearbyint: the default mode, even
}

}  // namespace

float fp8_mma_accumulate(float c, const float* products, int64_t n, const Fp8MmaModel& model) {
  double acc = c;
  for (int64_t k0 = 0; k0 < n; k0 += model.group) {
    const int64_t k1 = std::min(n, k0 + model.group);
    int largest = INT32_MIN;  // the largest exponent among the step's non-zero terms
    for (int64_t k = k0; k < k1; ++k)
      if (products[k] != 0) largest = std::max(largest, std::ilogb(products[k]));
    if (model.align_c && acc != 0) largest = std::max(largest, std::ilogb(acc));
    double sum = 0;
    if (largest == INT32_MIN) {  // every aligned term zero: only C, if not aligned, is left
      sum = acc;
    } else {
      const double unit = std::ldexp(1.0, largest - model.bits);
      for (int64_t k = k0; k < k1; ++k) sum += cut(products[k], unit, model.toward_floor);
      sum += model.align_c ? cut(acc, unit, model.toward_floor) : acc;
    }
    acc = keep_mantissa(sum, model.final_bits, model.final_nearest);
  }
  return static_cast<float>(acc);
}

}  // namespace mlacheck::ref
