#pragma once
// Runtime builds only: the probe behind unavailable_reason() (gpu/availability.h).
#include <optional>
#include <string>

namespace mlacheck::gpu::detail {

// Counts devices and runs one kernel on device 0; nullopt on success, else why it failed.
std::optional<std::string> probe_device();
// Multiprocessors (SMs / CUs) of device 0, the device all the code addresses.
int probe_multiprocessors();

}  // namespace mlacheck::gpu::detail
