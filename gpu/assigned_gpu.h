#pragma once
// The GPU that CTest's resource allocation gives a test process (ctest --resource-spec-file; the
// GPU tests ask for RESOURCE_GROUPS "gpus:1", cli/CMakeLists.txt), so that a host with several GPUs
// runs one test per GPU at a time. CTest passes the choice as CTEST_RESOURCE_GROUP_0_GPUS=
// "id:N,slots:M"; the runtime is then shown that GPU alone (CUDA_VISIBLE_DEVICES or
// HIP_VISIBLE_DEVICES = N), so that it is device 0 for all the code, which addresses device 0.
// Plain C++, in every build.
#include <optional>
#include <string>
#include <string_view>

namespace mlacheck::gpu {

// The GPU id of a CTEST_RESOURCE_GROUP_0_GPUS value: exactly one "id:N,slots:M" pair, N and M
// decimal digits (N a device index: scripts/gpu-resources.sh writes the spec), M >= 1. Throws
// std::invalid_argument naming the variable and the rule broken.
std::string parse_ctest_gpus(std::string_view value);

// Reads CTEST_RESOURCE_GROUP_0_GPUS; when it is set, makes that GPU the only visible one. Must run
// before the GPU runtime's first call (a runtime reads the variable once, when it starts): main
// calls it before any command runs. Throws std::invalid_argument for a malformed value.
void use_assigned_gpu();

// After use_assigned_gpu(): e.g. "GPU 3 (CTEST_RESOURCE_GROUP_0_GPUS=id:3,slots:1)", or nullopt
// when CTest assigned none.
std::optional<std::string> assigned_gpu();

}  // namespace mlacheck::gpu
