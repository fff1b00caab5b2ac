#pragma once
// Progress of long work on stderr: silent for the first second (short work prints nothing), then
// one line about every second with the fraction done and, from kMinFractionForEstimate on, an
// estimate of the time left; a final line when the work took long enough to have printed anything.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "ref/progress.h"

namespace mlacheck::cli {

// The first percent of a run is mostly start-up (allocation, thread spin-up), so an estimate from it
// is meaningless (issue 11: "~43385 s left" for a case done 1.2 s later); 5 % is past that.
inline constexpr double kMinFractionForEstimate = 0.05;

// One progress line (no newline); total > 0.
std::string progress_line(std::string_view what, int64_t done, int64_t total, double elapsed_s);

class ProgressPrinter final : public ref::Progress {
 public:
  explicit ProgressPrinter(std::string what);
  void update(int64_t done, int64_t total) override;

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_print_ = start_;
  bool printed_ = false;
};

}  // namespace mlacheck::cli
