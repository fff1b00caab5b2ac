// detmath.h: accuracy against long-double libm and the special values the reference relies on.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ref/detmath.h"
#include "ref/random.h"

namespace mlacheck::ref {
namespace {

namespace dm = detmath;

double ulps(double got, long double want) {
  const double w = static_cast<double>(want);
  const double ulp = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

TEST(RefDetmath, AccurateToAFewUlps) {
  double worst_exp = 0, worst_exp2 = 0, worst_log = 0, worst_log2 = 0, worst_sin = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const double u = random_unit(77, 1, i), v = random_unit(77, 2, i);
    const double x = (u - 0.5) * 1400.0;  // [-700, 700]
    worst_exp = std::max(worst_exp, ulps(dm::exp(x), std::exp(static_cast<long double>(x))));
    const double y = (u - 0.5) * 2000.0;
    worst_exp2 = std::max(worst_exp2, ulps(dm::exp2(y), std::exp2(static_cast<long double>(y))));
    const double z = std::ldexp(0.5 + v, static_cast<int>(u * 2000) - 1000);
    if (std::fabs(std::log(z)) > 1e-3)  // relative ulps are meaningless at log's zero
      worst_log = std::max(worst_log, ulps(dm::log(z), std::log(static_cast<long double>(z))));
    if (std::fabs(std::log2(z)) > 1e-3)
      worst_log2 = std::max(worst_log2, ulps(dm::log2(z), std::log2(static_cast<long double>(z))));
    double s, c;
    dm::sincos_turns(u, s, c);
    const long double a = 2 * 3.141592653589793238462643383279502884L * u;
    worst_sin = std::max({worst_sin, static_cast<double>(std::fabs(s - std::sin(a))),
                          static_cast<double>(std::fabs(c - std::cos(a)))});
  }
  EXPECT_LT(worst_exp, 2.0);
  EXPECT_LT(worst_exp2, 2.0);
  EXPECT_LT(worst_log, 4.0);
  EXPECT_LT(worst_log2, 4.0);
  EXPECT_LT(worst_sin, 4e-16);
  RecordProperty("worst_ulps_exp", std::to_string(worst_exp));
  RecordProperty("worst_ulps_log", std::to_string(worst_log));
}

TEST(RefDetmath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(dm::exp(0.0), 1.0);
  EXPECT_EQ(dm::exp(-inf), 0.0);
  EXPECT_EQ(dm::exp(inf), inf);
  EXPECT_EQ(dm::exp(-800.0), 0.0);
  EXPECT_GT(dm::exp(-740.0), 0.0);  // subnormal results are kept
  EXPECT_TRUE(std::isnan(dm::exp(NAN)));
  for (int k = -1074; k <= 1023; k += 7) EXPECT_EQ(dm::exp2(k), std::ldexp(1.0, k)) << k;
  EXPECT_EQ(dm::log(1.0), 0.0);
  EXPECT_EQ(dm::log(0.0), -inf);
  EXPECT_EQ(dm::log(inf), inf);
  EXPECT_TRUE(std::isnan(dm::log(-1.0)));
  for (int k = -1074; k <= 1023; k += 7) EXPECT_EQ(dm::log2(std::ldexp(1.0, k)), k) << k;
  double s, c;
  dm::sincos_turns(0.0, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
  dm::sincos_turns(0.25, s, c);
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(c, 0.0);
  dm::sincos_turns(0.5, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, -1.0);
}

}  // namespace
}  // namespace mlacheck::ref
