#include "gpu/assigned_gpu.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <stdlib.h>  // setenv (POSIX)

namespace mlacheck::gpu {
namespace {

constexpr const char* kVariable = "CTEST_RESOURCE_GROUP_0_GPUS";

// The backend's visible-devices variable (MLACHECK_GPU_BACKEND_NAME: gpu/CMakeLists.txt); none
// for a build without a GPU backend, whose GPU tests skip.
const char* visible_devices_variable() {
  const std::string_view backend = MLACHECK_GPU_BACKEND_NAME;
  if (backend == "cuda") return "CUDA_VISIBLE_DEVICES";
  if (backend == "hip") return "HIP_VISIBLE_DEVICES";
  return nullptr;
}

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::string>& assignment() {
  static std::optional<std::string> value;
  return value;
}

}  // namespace

std::string parse_ctest_gpus(std::string_view value) {
  const auto fail = [&](std::string_view why) {
    throw std::invalid_argument(std::string(kVariable) + "='" + std::string(value) + "': " +
                                std::string(why) +
                                " (CTest writes \"id:N,slots:M\" for a test with RESOURCE_GROUPS "
                                "\"gpus:1\"; the spec's ids must be device indices: "
                                "scripts/gpu-resources.sh)");
  };
  if (value.find(';') != std::string_view::npos)
    fail("more than one GPU given; mlacheck runs on one");
  const std::size_t comma = value.find(',');
  if (comma == std::string_view::npos) fail("not of the form id:N,slots:M");
  const std::string_view id = value.substr(0, comma), slots = value.substr(comma + 1);
  if (!id.starts_with("id:") || !slots.starts_with("slots:")) fail("not of the form id:N,slots:M");
  const std::string_view n = id.substr(3), m = slots.substr(6);
  if (!digits(n)) fail("the id is not a device index (digits 0-9)");
  if (!digits(m) || std::all_of(m.begin(), m.end(), [](char c) { return c == '0'; }))
    fail("slots is not a number >= 1");
  return std::string(n);
}

void use_assigned_gpu() {
  const char* value = std::getenv(kVariable);
  if (value == nullptr) return;  // ctest without a resource spec, a CPU test, or not under ctest
  const std::string id = parse_ctest_gpus(value);
  if (const char* visible = visible_devices_variable())
    if (setenv(visible, id.c_str(), 1) != 0)
      throw std::runtime_error(std::string("cannot set ") + visible + " for the GPU CTest assigned");
  assignment() = "GPU " + id + " (" + kVariable + "=" + value + ")";
}

std::optional<std::string> assigned_gpu() { return assignment(); }

}  // namespace mlacheck::gpu
