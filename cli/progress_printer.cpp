#include "cli/progress_printer.h"

#include <cstdio>
#include <utility>

#include <fmt/core.h>

namespace mlacheck::cli {

ProgressPrinter::ProgressPrinter(std::string what) : what_(std::move(what)) {}

void ProgressPrinter::update(int64_t done, int64_t total) {
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const bool finished = done >= total;
  if (finished) {
    if (printed_) fmt::print(stderr, "  {}: done in {:.1f} s\n", what_, elapsed);
    return;
  }
  if (elapsed < 1.0 || now - last_print_ < std::chrono::seconds(1) || total <= 0) return;
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  const double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  fmt::print(stderr, "  {}: {:5.1f} % ({:.0f} s elapsed, ~{:.0f} s left)\n", what_, 100 * fraction,
             elapsed, left);
  std::fflush(stderr);
  last_print_ = now;
  printed_ = true;
}

}  // namespace mlacheck::cli
