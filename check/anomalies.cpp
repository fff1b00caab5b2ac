#include "check/anomalies.h"

#include <cmath>
#include <stdexcept>

namespace mlacheck::check {

ValueClass classify(float x) {
  if (std::isnan(x)) return ValueClass::nan;
  if (std::isinf(x)) return x > 0 ? ValueClass::pos_inf : ValueClass::neg_inf;
  return ValueClass::finite;
}

void SpecialCounts::add(ValueClass c) {
  switch (c) {
    case ValueClass::nan:
      ++nan;
      break;
    case ValueClass::pos_inf:
      ++pos_inf;
      break;
    case ValueClass::neg_inf:
      ++neg_inf;
      break;
    case ValueClass::finite:
      break;
  }
}

AnomalyReport compare_anomalies(std::span<const float> got, std::span<const float> ref) {
  if (got.size() != ref.size()) throw std::invalid_argument("compare_anomalies: sizes differ");
  AnomalyReport r;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const ValueClass g = classify(got[i]), e = classify(ref[i]);
    r.got.add(g);
    r.ref.add(e);
    if (g != e) {
      ++r.mismatches;
      if (r.first.size() < AnomalyReport::kFirstPositions)
        r.first.push_back(static_cast<int64_t>(i));
    }
  }
  return r;
}

}  // namespace mlacheck::check
