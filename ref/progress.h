#pragma once
// Progress of long reference work (generation, decode), so a caller (cli/) can print it to stderr.
#include <cstdint>

namespace mlacheck::ref {

class Progress {
 public:
  virtual ~Progress() = default;
  // `done` of `total` units finished. Calls come one at a time, possibly from worker threads;
  // `done` increases from call to call and the last call has done == total. Must not throw.
  virtual void update(int64_t done, int64_t total) = 0;
};

}  // namespace mlacheck::ref
