#pragma once
// The rows of data/tunables/fast.def as data, for `mlacheck list` and the reports. Plain C++.
#include <span>
#include <string_view>

namespace mlacheck::gpu::fast {

struct TunableRow {
  std::string_view name;
  int value;
  std::string_view chosen_by;  // the measurement (or rule) that chose the value
};

std::span<const TunableRow> tunables();

}  // namespace mlacheck::gpu::fast
