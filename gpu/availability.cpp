#include "gpu/availability.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_probe.h"
#endif

namespace mlacheck::gpu {

std::optional<std::string> unavailable_reason() {
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  static const std::optional<std::string> reason = detail::probe_device();
  return reason;
#else
  // MLACHECK_GPU_BACKEND_NAME comes from gpu/CMakeLists.txt: the resolved backend, none or hip.
  const std::string backend = MLACHECK_GPU_BACKEND_NAME;
  if (backend == "hip")
    return "built without a GPU runtime (MLACHECK_GPU=hip: device code compile-checked only)";
  return "built without a GPU runtime (MLACHECK_GPU=" + backend + ")";
#endif
}

}  // namespace mlacheck::gpu
