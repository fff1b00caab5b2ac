#include "tests/property/time_budget.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace mlacheck::property {

double property_seconds(double default_seconds) {
  const char* env = std::getenv("MLACHECK_PROPERTY_SECONDS");
  if (env == nullptr || *env == '\0') return default_seconds;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  if (*end != '\0' || !std::isfinite(v) || v <= 0)
    throw std::invalid_argument(std::string("MLACHECK_PROPERTY_SECONDS='") + env +
                                "': must be a positive number of seconds");
  return v;
}

}  // namespace mlacheck::property
