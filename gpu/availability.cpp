#include "gpu/availability.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include <stdexcept>

#include "gpu/assigned_gpu.h"
#include "gpu/device_probe.h"
#endif

namespace mlacheck::gpu {

std::optional<std::string> unavailable_reason() {
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  static const std::optional<std::string> reason = [] {
    std::optional<std::string> why = detail::probe_device();
    // A GPU that CTest handed out must work: a resource spec that does not match the machine
    // would otherwise turn every GPU test into a skip, and the run green.
    if (why && assigned_gpu())
      throw std::runtime_error("CTest assigned " + *assigned_gpu() + " but it cannot run GPU work: " +
                               *why + "; write the resource spec on this machine (scripts/gpu-resources.sh)");
    return why;
  }();
  return reason;
#else
  // MLACHECK_GPU_BACKEND_NAME comes from gpu/CMakeLists.txt: the resolved backend, none or hip.
  const std::string backend = MLACHECK_GPU_BACKEND_NAME;
  if (backend == "hip")
    return "built without a GPU runtime (MLACHECK_GPU=hip: device code compile-checked only)";
  return "built without a GPU runtime (MLACHECK_GPU=" + backend + ")";
#endif
}

std::optional<int> device_multiprocessors() {
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  if (unavailable_reason()) return std::nullopt;
  static const int count = detail::probe_multiprocessors();
  return count;
#else
  return std::nullopt;
#endif
}

std::optional<int> device_compute_capability() {
#if defined(MLACHECK_GPU_RUNTIME_NVIDIA)
  if (unavailable_reason()) return std::nullopt;
  static const int cc = detail::probe_compute_capability();
  return cc;
#else
  return std::nullopt;
#endif
}

int planning_multiprocessors() {
  return device_multiprocessors().value_or(kPlanningMultiprocessorsWithoutGpu);
}

}  // namespace mlacheck::gpu
