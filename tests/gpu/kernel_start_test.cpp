// KernelStart's mechanism on the device (gpu/sm90/kernel_start_check.h): a kernel launched
// with_previous runs beside its predecessor (a reader that does not wait reads the predecessor's
// word before the predecessor writes it), wait_for_previous_kernel makes it see the write, and a
// kernel launched after_previous sees it without waiting. The first point is this test's power:
// if the kernels did not overlap, the second could not fail. (No test catches a decode kernel that
// reads before its wait: gpu/common/grid_dependency.h.) Skips without a usable GPU, on a device
// that is not compute capability 9.0, and in builds without sm_90a code.
#include <gtest/gtest.h>

#include "gpu/availability.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/sm90/kernel_start_check.h"
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuKernelStart, ALaterKernelRunsBesideItsPredecessorAndSeesItsWritesAfterTheWait) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  // 1 ms: far longer than a kernel launch (a few µs), so a reader started beside the writer reads
  // before the write.
  constexpr int kSpinMicroseconds = 1000;
  const KernelStartReads r = observe_kernel_start_reads(kSpinMicroseconds);
  EXPECT_FALSE(r.with_previous_unwaited)
      << "a reader launched with_previous that does not wait saw the write: the kernels did not overlap";
  EXPECT_TRUE(r.with_previous_waited) << "the reader that waited for its predecessor missed its write";
  EXPECT_TRUE(r.after_previous) << "a reader launched after_previous missed its predecessor's write";
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
