// gpu/warp.h's shuffles on a device, for every group width up to the physical warp.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu/availability.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/platform.h"
#include "gpu/warp_check.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuWarp, GroupSumMatchesHostForEveryWidthThatDividesTheWarp) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  std::vector<uint32_t> values(1024);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<uint32_t>(i) * 2654435761u + 12345u;  // distinct per lane
  for (int width = 2; width <= kWarpSize; width *= 2) {
    const std::vector<uint32_t> sums = device_group_sums(width, values);
    ASSERT_EQ(sums.size(), values.size());
    int wrong = 0;
    for (std::size_t group = 0; group < values.size(); group += width) {
      uint32_t expected = 0;
      for (int lane = 0; lane < width; ++lane) expected += values[group + lane];
      for (int lane = 0; lane < width; ++lane)
        if (sums[group + lane] != expected && ++wrong <= 4)
          ADD_FAILURE() << "width " << width << ", element " << group + lane << ": got "
                        << sums[group + lane] << ", expected " << expected;
    }
    EXPECT_EQ(wrong, 0) << "width " << width;
  }
  EXPECT_THROW(device_group_sums(2 * kWarpSize, values), std::invalid_argument);
#endif
}

TEST(GpuWarp, GroupPrefixSumMatchesHostForEveryWidthThatDividesTheWarp) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  std::vector<uint32_t> values(1024);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<uint32_t>(i) * 2246822519u + 777u;  // distinct per lane
  for (int width = 2; width <= kWarpSize; width *= 2) {
    const std::vector<uint32_t> sums = device_group_prefix_sums(width, values);
    ASSERT_EQ(sums.size(), values.size());
    int wrong = 0;
    for (std::size_t group = 0; group < values.size(); group += width) {
      uint32_t expected = 0;
      for (int lane = 0; lane < width; ++lane) {
        expected += values[group + lane];
        if (sums[group + lane] != expected && ++wrong <= 4)
          ADD_FAILURE() << "width " << width << ", element " << group + lane << ": got "
                        << sums[group + lane] << ", expected " << expected;
      }
    }
    EXPECT_EQ(wrong, 0) << "width " << width;
  }
  EXPECT_THROW(device_group_prefix_sums(2 * kWarpSize, values), std::invalid_argument);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
