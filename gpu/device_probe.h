#pragma once
// Runtime builds only: the probe behind unavailable_reason() (gpu/availability.h).
#include <optional>
#include <string>

namespace mlacheck::gpu::detail {

// Counts devices and runs one kernel on device 0; nullopt on success, else why it failed.
std::optional<std::string> probe_device();
// Multiprocessors (SMs / CUs) of device 0, the device all the code addresses.
int probe_multiprocessors();
// Compute capability of device 0 as major x 10 + minor.
int probe_compute_capability();

}  // namespace mlacheck::gpu::detail
