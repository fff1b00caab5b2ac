#pragma once
// Plain-text reports (fmt): what `mlacheck compare` prints and what tests show on failure.
#include <string>

#include "check/gate.h"
#include "check/harness_check.h"
#include "check/metrics.h"
#include "check/power.h"
#include "check/tolerance.h"

namespace mlacheck::check {

std::string format_metrics(const Metrics& m, const std::string& title);
std::string format_bound(const Bound& b);
std::string format_harness(const HarnessReport& h, const std::string& reference);
// Summary lines first (verdict of each bound and of the harness check), then the details.
std::string format_gate(const GateReport& g);
std::string format_power(const PowerReport& p);

}  // namespace mlacheck::check
