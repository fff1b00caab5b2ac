// gpu/common/owner.h against a linear scan: every position of prefix arrays with empty ranges
// (repeated starts) at the front, middle and end, and single-range arrays.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu/common/owner.h"

namespace mlacheck::gpu::common {
namespace {

TEST(PortableOwner, IsTheLastRangeStartingAtOrBeforeThePosition) {
  const std::vector<std::vector<int32_t>> cases{
      {0, 3},          // one range
      {0, 0, 0, 5},    // empty ranges first
      {0, 2, 2, 2, 7}, // empty ranges in the middle
      {0, 1, 4, 4},    // an empty range last
      {0, 1, 2, 3, 4, 5, 6, 7, 8},
  };
  for (const auto& indptr : cases) {
    const int count = static_cast<int>(indptr.size()) - 1;  // ranges [indptr[i], indptr[i+1])
    for (int64_t v = 0; v < indptr.back(); ++v) {
      int want = -1;
      for (int i = 0; i < count; ++i)
        if (indptr[i] <= v && v < indptr[i + 1]) want = i;
      EXPECT_EQ(owner_of(indptr.data(), count, v), want) << "position " << v;
    }
  }
}

}  // namespace
}  // namespace mlacheck::gpu::common
