// gpu::unavailable_reason(): the message every GPU test skips with.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "gpu/availability.h"

namespace mlacheck::gpu {
namespace {

// Also says in the test log what the GPU tests of this run will do (a print beside assertions; the
// former print-only test and a cached value compared with itself could not fail: issue 12 item 5).
TEST(GpuAvailability, ReasonMatchesTheBuild) {
  const auto reason = unavailable_reason();
  std::cout << "[ GPU      ] " << (reason ? "not usable: " + *reason : std::string("usable")) << "\n";
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  // Either usable, or the runtime said why: no device, or device 0 cannot run our code.
  if (reason) {
    const bool no_device = reason->rfind("no GPU device visible: ", 0) == 0;
    const bool cannot_run = reason->rfind("GPU 0 (", 0) == 0;
    EXPECT_TRUE(no_device || cannot_run) << *reason;
  }
#else
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->rfind("built without a GPU runtime (MLACHECK_GPU=", 0), 0u) << *reason;
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
