#pragma once
// `bench --stamps`: the lines under a row that say where its hopper blocks' time went (gpu/stamps.h),
// and the same in the JSON row.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/stamps.h"

namespace mlacheck::cli {

// Two lines, indented under the row: the cycle points (median [p10, p90] cycles after the block's
// entry; a point no block reached is left out) and the global-timer points (ns after the first
// block's entry). One line saying so when no block stamped (a strategy of another family).
std::string stamps_text(const std::vector<gpu::StampSpread>& spreads);
// {point: {blocks, p10, median, p90}} with the unit beside each ("cycles" or "ns").
nlohmann::json stamps_json(const std::vector<gpu::StampSpread>& spreads);

}  // namespace mlacheck::cli
