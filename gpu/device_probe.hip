#include "gpu/device_probe.h"

#include "gpu/device_buffer.h"
#include "gpu/platform.h"

namespace mlacheck::gpu::detail {

namespace {

constexpr int kProbeValue = 0x600D;

__global__ void probe_kernel(int* flag) { *flag = kProbeValue; }

std::string arch_name(const hipDeviceProp_t& prop) {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  return prop.gcnArchName;
#else
  return "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
#endif
}

}  // namespace

std::optional<std::string> probe_device() {
  int count = 0;
  if (const hipError_t status = hipGetDeviceCount(&count); status != hipSuccess) {
    static_cast<void>(hipGetLastError());
    return std::string("no GPU device visible: ") + hipGetErrorString(status);
  }
  if (count < 1) return std::string("no GPU device visible: the runtime reports 0 devices");

  std::string device = "GPU 0";
  try {
    hipDeviceProp_t prop{};
    MLACHECK_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
    device += " (" + std::string(prop.name) + ", " + arch_name(prop) + ")";
    // Running a kernel proves the binary holds code this device accepts (an sm_90 build on an
    // older card fails here, not in the middle of a test).
    DeviceBuffer<int> flag(1);
    flag.fill_bytes(0);
    probe_kernel<<<1, 1>>>(flag.get());
    MLACHECK_GPU_CHECK(hipGetLastError());
    MLACHECK_GPU_CHECK(hipDeviceSynchronize());
    if (flag.download().at(0) != kProbeValue)
      return device + " ran the probe kernel but it wrote nothing";
  } catch (const Error& e) {
    return device + " cannot run this binary's kernels: " + e.runtime_message();
  }
  return std::nullopt;
}

int probe_multiprocessors() {
  hipDeviceProp_t prop{};
  MLACHECK_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  return prop.multiProcessorCount;
}

int probe_compute_capability() {
  hipDeviceProp_t prop{};
  MLACHECK_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  return prop.major * 10 + prop.minor;
}

}  // namespace mlacheck::gpu::detail
