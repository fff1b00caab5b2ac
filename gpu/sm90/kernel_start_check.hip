// sm_90a builds only (gpu/CMakeLists.txt): KernelStart's mechanism on the device, for
// tests/gpu/kernel_start_test.cpp. The writer's spin makes its write land long after a reader
// started beside it would have read; so the reader that does not wait sees the old word exactly
// when the two kernels overlapped, which is what makes the waited reader's check mean something.
#include "gpu/sm90/kernel_start_check.h"

#include <cstdint>
#include <vector>

#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
#include "gpu/device_buffer.h"
#include "gpu/platform.h"

namespace mlacheck::gpu {
namespace {

constexpr uint32_t kOld = 0x0DDBA11u;
constexpr uint32_t kWritten = 0x5EEDBEEFu;

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_then_write_kernel(uint32_t* word, int spin_us) {
  common::let_next_kernel_start();
  const uint64_t until = global_ns() + static_cast<uint64_t>(spin_us) * 1000u;
  while (global_ns() < until) {
  }
  *word = kWritten;
}

template <bool Wait>
__global__ void read_kernel(const uint32_t* word, uint32_t* seen) {
  if constexpr (Wait) common::wait_for_previous_kernel();
  *seen = *reinterpret_cast<const volatile uint32_t*>(word);
}

// A stream of its own (the overlap is a property of one stream's consecutive kernels).
struct Stream {
  hipStream_t handle = nullptr;
  Stream() { MLACHECK_GPU_CHECK(hipStreamCreate(&handle)); }
  ~Stream() { static_cast<void>(hipStreamDestroy(handle)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

bool reader_sees_write(void (*reader)(const uint32_t*, uint32_t*), common::KernelStart start, int spin_us) {
  DeviceBuffer<uint32_t> word(std::vector<uint32_t>{kOld}), seen(std::vector<uint32_t>{0u});
  const Stream stream;
  common::launch_kernel(spin_then_write_kernel, dim3(1), dim3(1), 0, stream.handle,
                        common::KernelStart::after_previous, word.get(), spin_us);
  common::launch_kernel(reader, dim3(1), dim3(1), 0, stream.handle, start, static_cast<const uint32_t*>(word.get()),
                        seen.get());
  MLACHECK_GPU_CHECK(hipStreamSynchronize(stream.handle));
  return seen.download().at(0) == kWritten;
}

}  // namespace

KernelStartReads observe_kernel_start_reads(int spin_us) {
  // Each kernel launched once untimed first: with lazy module loading (CUDA's default) a kernel's
  // first launch loads it on the host, which could let the writer finish before the reader was
  // even queued.
  static_cast<void>(reader_sees_write(read_kernel<false>, common::KernelStart::after_previous, 0));
  static_cast<void>(reader_sees_write(read_kernel<true>, common::KernelStart::after_previous, 0));
  KernelStartReads r;
  r.with_previous_unwaited = reader_sees_write(read_kernel<false>, common::KernelStart::with_previous, spin_us);
  r.with_previous_waited = reader_sees_write(read_kernel<true>, common::KernelStart::with_previous, spin_us);
  r.after_previous = reader_sees_write(read_kernel<false>, common::KernelStart::after_previous, spin_us);
  return r;
}

}  // namespace mlacheck::gpu
