#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): what `mlacheck bench` measures with. Times come
// from device events recorded on the stream around the measured work only.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/params.h"

namespace mlacheck::gpu {

struct DeviceInfo {
  std::string name;
  int multiprocessors = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
};
DeviceInfo device_info();  // of device 0

// A device buffer read whole by the streaming-read kernel (16-byte loads, several in flight per
// thread, nothing written but one word): between timed repetitions it flushes L2 without leaving
// dirty lines behind; timed on its own it gives the read ceiling of the GPU.
class StreamReader {
 public:
  explicit StreamReader(std::size_t bytes);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;
  void read(StreamHandle stream) const;  // queues one full read
  std::size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Waits until the work queued on `stream` is done (throws on a device error).
void synchronize(StreamHandle stream);

// Milliseconds of each of `reps` calls of `launch(stream)`, after `warmup` untimed calls. Before
// each timed call `flush` (if given) reads its buffer, outside the timed interval. With `graph`,
// the call is captured once into a graph and each repetition replays it (no launch overhead).
std::vector<float> time_launches(const std::function<void(StreamHandle)>& launch,
                                 StreamHandle stream, int reps, int warmup, bool graph,
                                 const StreamReader* flush);

}  // namespace mlacheck::gpu
