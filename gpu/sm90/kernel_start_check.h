#pragma once
// NVIDIA builds for sm_90a only (MLACHECK_HAVE_SM90A): the device side of
// tests/gpu/kernel_start_test.cpp, which checks the mechanism of KernelStart::with_previous
// (gpu/common/kernel_start.h, launch_kernel.h, grid_dependency.h) on the device.

namespace mlacheck::gpu {

// A writer kernel (launched after_previous; it lets the next kernel start at once, then spins
// `spin_us` microseconds and writes a word), then a reader kernel that copies the word, three ways:
// launched with_previous without waiting, with_previous after wait_for_previous_kernel, and
// after_previous without waiting. Each field: whether that reader saw the write.
struct KernelStartReads {
  bool with_previous_unwaited = false;  // false when the two kernels ran side by side
  bool with_previous_waited = false;    // the wait must make it true
  bool after_previous = false;          // stream order must make it true
};
KernelStartReads observe_kernel_start_reads(int spin_us);

}  // namespace mlacheck::gpu
