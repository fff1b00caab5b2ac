#include "check/lse.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "problem/shape.h"

namespace mlacheck::check {

double lse_tolerance(double ref, int64_t keys, double sum_rounding) {
  constexpr double u = 0x1p-24;  // float32 unit roundoff
  const double k = 2.0 * static_cast<double>(keys);
  const double gamma = k * u < 1 ? k * u / (1 - k * u) : INFINITY;
  const double rounded_sum = sum_rounding < 1 ? -std::log1p(-sum_rounding) : INFINITY;
  return kLseUnits * std::ldexp(std::fabs(ref) + 1, -23) + std::log1p(2 * gamma) + rounded_sum;
}

LseReport check_lse(std::span<const float> got, std::span<const float> ref, const OutputLayout& layout,
                    std::span<const float> sum_rounding) {
  if (got.size() != ref.size()) throw std::invalid_argument("check_lse: sizes differ");
  if (!sum_rounding.empty() && sum_rounding.size() != ref.size())
    throw std::invalid_argument("check_lse: " + std::to_string(sum_rounding.size()) +
                                " row-sum rounding deltas for " + std::to_string(ref.size()) + " rows");
  if (static_cast<int64_t>(ref.size()) != layout.rows())
    throw std::invalid_argument("check_lse: " + std::to_string(ref.size()) + " values for a layout of " +
                                std::to_string(layout.rows()) + " rows");
  LseReport r;
  r.row_sum_rounding = !sum_rounding.empty();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const bool gf = std::isfinite(got[i]), rf = std::isfinite(ref[i]);
    if (gf != rf || (!gf && !(got[i] == ref[i]))) {
      ++r.class_mismatches;
      continue;
    }
    if (!gf) continue;
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    const double tol = lse_tolerance(ref[i], layout.visible_kv(static_cast<int64_t>(i) / problem::kNumHeads),
                                     sum_rounding.empty() ? 0.0 : sum_rounding[i]);
    const double ratio = err / tol;
    if (ratio > 1) ++r.beyond;
    if (ratio > r.worst_ratio) {
      const double unit = std::ldexp(std::fabs(static_cast<double>(ref[i])) + 1, -23);
      r.worst_ratio = ratio;
      r.worst_units = err / unit;
      r.worst_allowed_units = tol / unit;
      r.worst_index = i;
      r.worst_got = got[i];
      r.worst_ref = ref[i];
    }
  }
  return r;
}

}  // namespace mlacheck::check
