#include "cli/progress_printer.h"

#include <cstdio>
#include <utility>

#include <fmt/core.h>

namespace mlacheck::cli {

std::string progress_line(std::string_view what, int64_t done, int64_t total, double elapsed_s) {
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  // Work is uneven at the start (allocation, thread spin-up): see kMinFractionForEstimate.
  if (fraction < kMinFractionForEstimate)
    return fmt::format("  {}: {:5.1f} % ({:.0f} s elapsed)", what, 100 * fraction, elapsed_s);
  const double left = elapsed_s * (1 - fraction) / fraction;
  return fmt::format("  {}: {:5.1f} % ({:.0f} s elapsed, ~{:.0f} s left)", what, 100 * fraction,
                     elapsed_s, left);
}

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
  fmt::print(stderr, "{}\n", progress_line(what_, done, total, elapsed));
  std::fflush(stderr);
  last_print_ = now;
  printed_ = true;
}

}  // namespace mlacheck::cli
