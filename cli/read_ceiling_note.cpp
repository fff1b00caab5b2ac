#include "cli/read_ceiling_note.h"

#include <fmt/core.h>

namespace mlacheck::cli {

std::optional<std::string> read_ceiling_note(int rows_above, double best_pct) {
  if (rows_above <= 0) return std::nullopt;
  return fmt::format(
      "{} {} above 100 % of the read ceiling (highest {:.1f} %): on this device the streaming-read kernel "
      "reads slower than some kernel's copies, so it is not the memory's limit; read % ceil as a ratio to it",
      rows_above, rows_above == 1 ? "row is" : "rows are", best_pct);
}

}  // namespace mlacheck::cli
