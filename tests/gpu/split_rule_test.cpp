// The split rule of the fast strategies (gpu/fast/split_rule.h): its answers on the harness shapes
// (what the emulation of `mlacheck verify` will run), its bounds, and that it is the minimum of its
// own cost model (checked by brute force against an independent evaluation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "gpu/fast/split_rule.h"

namespace mlacheck::gpu::fast {
namespace {

constexpr SplitRule kH200{132, 64, 2, 256};

int64_t cost(int64_t b, int64_t l, int64_t s) {
  const int64_t waves = (b * s + 131) / 132;
  const int64_t per_split = (l + s - 1) / s;
  return waves * ((per_split + 63) / 64 + 2);
}

TEST(FastSplitRule, HarnessShapes) {
  // Worked by hand from the cost model (waves of 132 blocks x (tiles + 2)), fewest splits among
  // equals.
  EXPECT_EQ(split_count(kH200, 4, 1024), 16);     // 64 blocks of one tile each
  EXPECT_EQ(split_count(kH200, 4, 8192), 32);     // 128 blocks of 4 tiles
  EXPECT_EQ(split_count(kH200, 32, 1024), 4);     // 128 blocks of 4 tiles
  EXPECT_EQ(split_count(kH200, 64, 8192), 2);     // 128 blocks of 64 tiles
  EXPECT_EQ(split_count(kH200, 256, 8192), 0);    // 2 waves of whole requests
  EXPECT_EQ(split_count(kH200, 256, 1024), 0);
}

TEST(FastSplitRule, BoundsAndMinimality) {
  for (const int64_t b : {1, 2, 3, 5, 16, 33, 64, 100, 131, 132, 133, 300}) {
    for (const int64_t l : {1, 2, 63, 64, 65, 500, 1024, 4097, 8192, 32768}) {
      const int s = split_count(kH200, b, l);
      ASSERT_NE(s, 1) << "one split is reported as 0 (single pass)";
      const int64_t used = s == 0 ? 1 : s;
      EXPECT_LE(used, 256);
      EXPECT_LE(used, (l + 63) / 64) << b << " x " << l << ": more splits than tiles";
      for (int64_t other = 1; other <= std::min<int64_t>(256, (l + 63) / 64); ++other) {
        EXPECT_LE(cost(b, l, used), cost(b, l, other)) << b << " x " << l;
        if (other < used) {
          EXPECT_LT(cost(b, l, used), cost(b, l, other)) << "fewest among equals";
        }
      }
    }
  }
  EXPECT_EQ(split_count(kH200, 0, 100), 0);
  EXPECT_EQ(split_count(kH200, 5, 0), 0);
}

}  // namespace
}  // namespace mlacheck::gpu::fast

namespace mlacheck::gpu::fast {
namespace {

TEST(FastSplitRule, PersistentChunkMakesAboutTwoItemsPerSmInWholeTiles) {
  constexpr SplitRule kRule{132, 32, 2, 256, 2};
  // 256 x 8192 keys over 264 items: 7944 keys, rounded up to tiles of 32: 7968.
  EXPECT_EQ(persistent_chunk_keys(kRule, 256 * 8192), 7968);
  EXPECT_EQ(persistent_chunk_keys(kRule, 4 * 1024), 32);  // 16 keys per item: one tile at least
  EXPECT_EQ(persistent_chunk_keys(kRule, 0), 32);
  for (const int64_t b : {1, 7, 64, 300})
    for (const int64_t l : {1, 100, 8192}) {
      const int c = persistent_chunk_keys(kRule, b * l);
      EXPECT_EQ(c % 32, 0);
      EXPECT_GE(static_cast<int64_t>(c) * 264, b * l) << "at most two items per SM";
      EXPECT_LT(static_cast<int64_t>(c - 32) * 264, std::max<int64_t>(b * l, 1)) << "smallest such";
    }
}

}  // namespace
}  // namespace mlacheck::gpu::fast
