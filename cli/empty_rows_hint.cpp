#include "cli/empty_rows_hint.h"

#include <cmath>
#include <cstdint>

#include <fmt/core.h>

#include "problem/shape.h"

namespace mlacheck::cli {

std::optional<std::string> empty_rows_hint(std::span<const float> output, const check::OutputLayout& layout) {
  constexpr int64_t kRow = int64_t{problem::kNumHeads} * problem::kVDim;  // one token's values
  int64_t off_in_empty = 0, nonfinite_elsewhere = 0;
  for (int64_t t = 0; t < layout.tokens() && static_cast<std::size_t>((t + 1) * kRow) <= output.size(); ++t) {
    const bool empty = layout.visible_kv(t) == 0;
    for (int64_t i = t * kRow; i < (t + 1) * kRow; ++i) {
      const float x = output[static_cast<std::size_t>(i)];
      if (empty && x != 0.0f) ++off_in_empty;
      if (!empty && !std::isfinite(x)) ++nonfinite_elsewhere;
    }
  }
  if (off_in_empty == 0 || nonfinite_elsewhere > 0) return std::nullopt;
  return fmt::format("hint: {} elements differ from 0 in rows with no visible key, and no other element is NaN "
                     "or Inf; a kernel that leaves those rows undefined (Triton kernels write NaN there) is "
                     "judged with --empty-rows any",
                     off_in_empty);
}

}  // namespace mlacheck::cli
