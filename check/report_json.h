#pragma once
// JSON reports (nlohmann_json): the whole report of `mlacheck compare --json`, for CI dashboards.
// Non-finite numbers are written as null (JSON has no NaN/Inf).
#include <nlohmann/json.hpp>

#include "check/gate.h"
#include "check/harness_check.h"
#include "check/metrics.h"
#include "check/power.h"
#include "check/tolerance.h"

namespace mlacheck::check {

nlohmann::json to_json(const Metrics& m);
nlohmann::json to_json(const Bound& b);
nlohmann::json to_json(const HarnessReport& h);
nlohmann::json to_json(const GateReport& g);
nlohmann::json to_json(const PowerReport& p);

}  // namespace mlacheck::check
