#pragma once
// Thread-safe adder in front of a Progress (which may be null): workers add the units they finish.
#include <cstdint>
#include <mutex>

#include "ref/progress.h"

namespace mlacheck::ref {

class ProgressCounter {
 public:
  ProgressCounter(Progress* sink, int64_t total) : sink_(sink), total_(total) {}
  void add(int64_t units) {
    if (sink_ == nullptr || units == 0) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ += units;
    sink_->update(done_, total_);
  }

 private:
  Progress* sink_;
  int64_t total_;
  int64_t done_ = 0;
  std::mutex mutex_;
};

}  // namespace mlacheck::ref
