#include "check/lse.h"

#include <cmath>
#include <stdexcept>

namespace mlacheck::check {

LseReport check_lse(std::span<const float> got, std::span<const float> ref) {
  if (got.size() != ref.size()) throw std::invalid_argument("check_lse: sizes differ");
  LseReport r;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const bool gf = std::isfinite(got[i]), rf = std::isfinite(ref[i]);
    if (gf != rf || (!gf && !(got[i] == ref[i]))) {
      ++r.class_mismatches;
      continue;
    }
    if (!gf) continue;
    const double units = std::fabs(static_cast<double>(got[i]) - ref[i]) /
                         std::ldexp(std::fabs(static_cast<double>(ref[i])) + 1, -23);
    if (units > r.worst_units) {
      r.worst_units = units;
      r.worst_index = i;
      r.worst_got = got[i];
      r.worst_ref = ref[i];
    }
  }
  return r;
}

}  // namespace mlacheck::check
