// gpu::Error and gpu::fail: the one exit of every failed GPU check (no runtime needed).
#include <gtest/gtest.h>

#include <string>

#include "gpu/error.h"

namespace mlacheck::gpu {
namespace {

TEST(GpuError, FailThrowsErrorCarryingCallFileLineCodeAndMessage) {
  try {
    fail("hipMalloc(&ptr, bytes)", "gpu/some_kernel.hip", 42, 2, "out of memory");
    FAIL() << "fail() returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "hipMalloc(&ptr, bytes)");
    EXPECT_EQ(e.file(), "gpu/some_kernel.hip");
    EXPECT_EQ(e.line(), 42);
    EXPECT_EQ(e.code(), 2);
    EXPECT_EQ(e.runtime_message(), "out of memory");
    EXPECT_STREQ(e.what(),
                 "gpu/some_kernel.hip:42: GPU call `hipMalloc(&ptr, bytes)` failed: out of memory "
                 "(error 2)");
  }
}

TEST(GpuError, IsARuntimeErrorSoMainCanCatchItGenerically) {
  EXPECT_THROW(fail("f()", "x.hip", 1, 1, "boom"), std::runtime_error);
}

TEST(GpuError, NullArgumentsStillGiveAMessage) {
  try {
    fail(nullptr, nullptr, 7, 3, nullptr);
    FAIL() << "fail() returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "?:7: GPU call `?` failed: (no message) (error 3)");
  }
}

}  // namespace
}  // namespace mlacheck::gpu
