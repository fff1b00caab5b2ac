#pragma once
// Progress of long work on stderr: silent for the first second (short work prints nothing), then
// one line about every second with the fraction done and an estimate of the time left, and a
// final line when the work took long enough to have printed anything.
#include <chrono>
#include <cstdint>
#include <string>

#include "ref/progress.h"

namespace mlacheck::cli {

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
