// check/lse.h: -inf must stay -inf, NaN never matches, finite values are judged relative to
// |lse| + 1 (so near-zero LSEs get an absolute floor), and the worst row is the one reported.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "check/lse.h"

namespace mlacheck::check {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CheckLse, RelativeToMagnitudePlusOne) {
  const double unit = std::ldexp(1.0, -23);
  const std::vector<float> ref{0.0f, 1e-4f, 9.0f, -kInf};
  // 0 -> 60 units of 1 (passes, though it is ~2^30 float ulps of 0); 9 -> 10 units of 10.
  const std::vector<float> got{static_cast<float>(60 * unit), 1e-4f,
                               static_cast<float>(9.0 + 10 * 10 * unit), -kInf};
  const LseReport r = check_lse(got, ref);
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.worst_index, 0u);
  EXPECT_NEAR(r.worst_units, 60, 0.5);

  std::vector<float> bad = got;
  bad[2] = static_cast<float>(9.0 + 100 * 10 * unit);
  const LseReport b = check_lse(bad, ref);
  EXPECT_FALSE(b.pass());
  EXPECT_EQ(b.worst_index, 2u);
  EXPECT_NEAR(b.worst_units, 100, 1);
}

TEST(CheckLse, ClassesMustMatch) {
  const std::vector<float> ref{-kInf, 1.0f, 2.0f};
  EXPECT_EQ(check_lse(std::vector<float>{0.0f, 1.0f, 2.0f}, ref).class_mismatches, 1);
  EXPECT_EQ(check_lse(std::vector<float>{-kInf, std::nanf(""), 2.0f}, ref).class_mismatches, 1);
  const std::vector<float> nan_ref{std::nanf("")};
  EXPECT_FALSE(check_lse(nan_ref, nan_ref).pass());  // NaN never matches, not even NaN
  EXPECT_THROW(check_lse(std::vector<float>{1.0f}, ref), std::invalid_argument);
}

}  // namespace
}  // namespace mlacheck::check
