// ref/random.h: the lane-parallel Philox equals Random123's, normals are pinned and normal.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "ref/box_muller.h"
#include "ref/kernels.h"
#include "ref/random.h"

namespace mlacheck::ref {
namespace {

TEST(RefRandom, LanePhiloxEqualsRandom123) {
  for (uint64_t seed : {0ull, 1ull, 4217ull, 0xFFFFFFFFFFFFFFFFull})
    for (uint32_t stream : {0u, 1u, 0xFFFFFFFFu})
      for (uint64_t index : {0ull, 1ull, 0xFFFFFFFFull, 0x100000000ull, 0xDEADBEEFCAFEull}) {
        uint64_t c0 = index & 0xFFFFFFFF, c1 = index >> 32, c2 = stream, c3 = 0;
        philox4x32_10<uint64_t>(c0, c1, c2, c3, seed & 0xFFFFFFFF, seed >> 32);
        const auto want = philox_block(seed, stream, index);
        EXPECT_EQ(c0, want[0]);
        EXPECT_EQ(c1, want[1]);
        EXPECT_EQ(c2, want[2]);
        EXPECT_EQ(c3, want[3]);
      }
}

// Pinned values: a change in the counter layout, the uniforms or Box–Muller shows here.
TEST(RefRandom, PinnedDraws) {
  EXPECT_EQ(random_u32(4217, 1, 0), 521997458u);
  EXPECT_EQ(random_u32(4217, 1, 0, 3), 2275746830u);
  EXPECT_EQ(normal_at(4217, 1, 0), -0x1.cbe8871485807p+0);
  EXPECT_EQ(normal_at(4217, 1, 1), -0x1.5d4b8a69b9158p-2);
  EXPECT_EQ(normal_at(4217, 1, 2), -0x1.8bd5c5c07a15bp-1);
  EXPECT_EQ(normal_at(4217, 1, 3), -0x1.011638c102ad4p-1);
  EXPECT_EQ(normal_at(9826, 2, 1234567890123ull), 0x1.71ffe746c79a6p+0);  // 64-bit counter
}

TEST(RefRandom, FillNormalsEqualsNormalAtForAnyOffset) {
  for (uint64_t first : {0ull, 1ull, 15ull, 16ull, 33ull, 1000001ull})
    for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 100u}) {
      std::vector<double> out(n);
      fill_normals(9, 3, first, out);
      for (std::size_t j = 0; j < n; ++j) {
        const double want = normal_at(9, 3, first + j);
        ASSERT_EQ(std::memcmp(&out[j], &want, sizeof want), 0) << first << " + " << j;
      }
    }
}

TEST(RefRandom, NormalsLookNormal) {
  const std::size_t n = 1 << 20;
  std::vector<double> z(n);
  fill_normals(123, 5, 0, z);
  double s1 = 0, s2 = 0, s4 = 0;
  std::size_t beyond3 = 0;
  for (double x : z) {
    s1 += x;
    s2 += x * x;
    s4 += x * x * x * x;
    beyond3 += std::fabs(x) > 3;
  }
  EXPECT_NEAR(s1 / n, 0.0, 5.0 / std::sqrt(n));          // 5 sigma
  EXPECT_NEAR(s2 / n, 1.0, 5.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(s4 / n, 3.0, 5.0 * std::sqrt(96.0 / n));
  EXPECT_NEAR(beyond3 / static_cast<double>(n), 0.0026998, 5.0 * std::sqrt(0.0027 / n));
}

}  // namespace
}  // namespace mlacheck::ref
