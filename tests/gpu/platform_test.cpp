// gpu/platform.h on the host: the warp-width constant and MLACHECK_GPU_CHECK. Needs a GPU
// runtime linked in (not a device: a call that fails without one fails just the same).
#include <gtest/gtest.h>

#include <string>

#include "gpu/availability.h"
#include "gpu/error.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/platform.h"
#endif

namespace mlacheck::gpu {
namespace {

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#if defined(MLACHECK_GPU_PLATFORM_NVIDIA)
static_assert(kWarpSize == 32);
#else
static_assert(kWarpSize == 64);
#endif
static_assert(divides_warp(1) && divides_warp(2) && divides_warp(kWarpSize));
static_assert(!divides_warp(0) && !divides_warp(-4) && !divides_warp(3) && !divides_warp(12));
static_assert(!divides_warp(2 * kWarpSize));
#endif

TEST(GpuPlatform, CheckMacroThrowsWithCallTextFileAndLine) {
#if !defined(MLACHECK_HAVE_GPU_RUNTIME)
  GTEST_SKIP() << unavailable_reason().value_or("no GPU runtime");
#else
  hipDeviceProp_t prop{};
  int line = 0;
  try {
    // Device -1 never exists: invalid device with a GPU, no device / no driver without one.
    line = __LINE__ + 1;
    MLACHECK_GPU_CHECK(hipGetDeviceProperties(&prop, -1));
    FAIL() << "MLACHECK_GPU_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "hipGetDeviceProperties(&prop, -1)");
    EXPECT_EQ(e.file(), __FILE__);
    EXPECT_EQ(e.line(), line);
    EXPECT_NE(e.code(), static_cast<int>(hipSuccess));
    EXPECT_FALSE(e.runtime_message().empty());
    EXPECT_NE(std::string(e.what()).find(e.runtime_message()), std::string::npos) << e.what();
  }
  // The failure was reported by the exception, so it must not linger for the next check. (With
  // no usable device every call fails, hipGetLastError() included: nothing to clear then.)
  if (!unavailable_reason()) {
    EXPECT_EQ(hipGetLastError(), hipSuccess);
  }
#endif
}

TEST(GpuPlatform, CheckMacroPassesSuccessThrough) {
#if !defined(MLACHECK_HAVE_GPU_RUNTIME)
  GTEST_SKIP() << unavailable_reason().value_or("no GPU runtime");
#else
  EXPECT_NO_THROW(MLACHECK_GPU_CHECK(hipSuccess));
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
