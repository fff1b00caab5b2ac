// The tile layer's bulk copy (gpu/mma/mma.h: bulk_copy completed by a barrier's transaction count,
// NVIDIA sm_90) on the device: rows of every cache format's size, issued out of order by one
// thread in two phases of one barrier, read back by other warps after the wait. Poisoned shared
// memory and output: a row that did not land, landed in the wrong slot or was read before the
// barrier completed shows as 0xA5 / 0xFF bytes. Skips without a usable GPU; in a build whose
// runtime is not NVIDIA's the copy does not exist and the test says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "problem/shape.h"

#if defined(MLACHECK_GPU_RUNTIME_NVIDIA)
#include "gpu/mma/bulk_copy_check.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuBulkCopy, RowsLandInTheirSlotsBeforeTheBarrierCompletes) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_GPU_RUNTIME_NVIDIA)
  GTEST_SKIP() << "the bulk copy is NVIDIA sm_90's copy engine; this build's runtime is not NVIDIA's";
#else
  std::mt19937 rng(20261201u);
  // bf16, fp8 and MXFP4 cache rows (1152, 576, 288 bytes) and the smallest legal copy (16 bytes).
  for (const int row_bytes : {2 * problem::kQkDim, problem::kQkDim, problem::kMxfp4RowBytes, 16}) {
    const int rows = std::min(37, kBulkCopyMaxBytes / row_bytes);  // an odd count: unequal phases
    SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(row_bytes) + " bytes");
    std::vector<uint8_t> src(static_cast<std::size_t>(rows) * row_bytes);
    for (uint8_t& x : src) x = static_cast<uint8_t>(rng() % 255u);  // never 0xFF, rarely 0xA5
    std::vector<int> order(static_cast<std::size_t>(rows));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const std::vector<uint8_t> got = device_bulk_copy(src, row_bytes, order);
    ASSERT_EQ(got.size(), src.size());
    int wrong = 0;
    for (std::size_t i = 0; i < src.size(); ++i)
      if (got[i] != src[i] && ++wrong <= 8)
        ADD_FAILURE() << "row " << i / row_bytes << " byte " << i % row_bytes << ": got "
                      << int{got[i]} << ", expected " << int{src[i]};
    EXPECT_EQ(wrong, 0);
  }
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
