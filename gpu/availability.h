#pragma once
// Whether this binary can run GPU work here, as an answer rather than an error: tests skip with
// the reason, `main` prints it. Compiled in every build.
#include <optional>
#include <string>

namespace mlacheck::gpu {

// nullopt when GPU work can run; otherwise why not, in words fit for a skip message:
//   "built without a GPU runtime (MLACHECK_GPU=none)"
//   "built without a GPU runtime (MLACHECK_GPU=hip: device code compile-checked only)"
//   "no GPU device visible: <runtime message>"
//   "GPU 0 (<name>, <arch>) cannot run this binary's kernels: <runtime message>"
// With a runtime, the first call probes device 0 (a context and one tiny kernel); the answer is
// kept for the rest of the process.
std::optional<std::string> unavailable_reason();

// Multiprocessors (NVIDIA SMs, AMD CUs) of the device this process runs on, from the runtime (the
// split rules fill whole waves of them and the persistent schedule starts one block on each); nullopt
// where no GPU is usable.
std::optional<int> device_multiprocessors();

// What a split plan is made for: the device's count where a GPU is usable; elsewhere, where no
// kernel runs and only the emulation reads the plan (verify without a GPU, `list`, the CPU tests),
// kPlanningMultiprocessorsWithoutGpu.
inline constexpr int kPlanningMultiprocessorsWithoutGpu = 132;  // the H200 the tunables were measured on
int planning_multiprocessors();

// The compute capability of the device this process runs on as major x 10 + minor (NVIDIA: 90 for
// the H100 / H200), nullopt where no GPU is usable or the vendor has none (AMD).
std::optional<int> device_compute_capability();

}  // namespace mlacheck::gpu
