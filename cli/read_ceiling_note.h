#pragma once
// bench's line under its table when some row moved its bytes faster than the read ceiling measured
// beside it: the streaming-read kernel is then not an upper bound on that device, and "% ceil"
// above 100 means that, not a kernel beating the memory. Measured so: on an H100 the bf16 hopper
// kernel's bulk copies moved 100.5-100.7 % of it at 256 x 8192 (docs/PERF.md, "Device runs 2-3 of
// 2026-12-05's twelfth session"); on the H200 the best row stays near 90 %.
#include <optional>
#include <string>

namespace mlacheck::cli {

// rows_above: the rows at more than 100 % of the ceiling; best_pct: the highest row's share.
// Nothing when no row is above.
std::optional<std::string> read_ceiling_note(int rows_above, double best_pct);

}  // namespace mlacheck::cli
