// check/lse.h: -inf must stay -inf, NaN never matches, finite values are judged relative to
// |lse| + 1 (so near-zero LSEs get an absolute floor) plus the row sum's grouping term, which
// grows with the row's keys; the worst row is the one reported.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "check/layout.h"
#include "check/lse.h"
#include "problem/shape.h"

namespace mlacheck::check {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int H = problem::kNumHeads;

// values[t] in every one of the 16 heads of token t.
std::vector<float> per_token(const std::vector<float>& values) {
  std::vector<float> out;
  for (float v : values) out.insert(out.end(), H, v);
  return out;
}

TEST(CheckLse, RelativeToMagnitudePlusOne) {
  const double unit = std::ldexp(1.0, -23);
  const OutputLayout one_key({0, 1, 2, 3}, {1, 1, 1, 1});
  const std::vector<float> ref = per_token({0.0f, 1e-4f, 9.0f, -kInf});
  // 0 -> 60 units of 1 (passes, though it is ~2^30 float ulps of 0); 9 -> 10 units of 10.
  const std::vector<float> got = per_token({static_cast<float>(60 * unit), 1e-4f,
                                            static_cast<float>(9.0 + 10 * 10 * unit), -kInf});
  const LseReport r = check_lse(got, ref, one_key);
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.worst_index, 0u);
  EXPECT_NEAR(r.worst_units, 60, 0.5);
  // One key: the grouping term ln(1 + 2 gamma(2)) is ~2^-22, 2 units of |0| + 1.
  EXPECT_NEAR(r.worst_allowed_units, kLseUnits + 2, 0.01);

  std::vector<float> bad = got;
  bad[2 * H + 5] = static_cast<float>(9.0 + 100 * 10 * unit);
  const LseReport b = check_lse(bad, ref, one_key);
  EXPECT_FALSE(b.pass());
  EXPECT_EQ(b.beyond, 1);
  EXPECT_EQ(b.worst_index, static_cast<std::size_t>(2 * H + 5));
  EXPECT_NEAR(b.worst_units, 100, 1);
}

// The measured need (check/lse.h): 64.6 units at lse 15.83 between two schedules of a correct
// a16w16 decode of 4096 peaked keys. Accepted there; a split of 8 left out of the merge (lse off
// by ln(8/7)) and LSE in base 2 are not, nor is the same 64.6 units on a row of one key.
TEST(CheckLse, TheRowSumsGroupingGrowsWithTheKeys) {
  const double ref = 15.83;
  const double measured = ref + 64.6 * std::ldexp(ref + 1, -23);
  const std::vector<float> want = per_token({static_cast<float>(ref)});
  EXPECT_TRUE(check_lse(per_token({static_cast<float>(measured)}), want, OutputLayout({0}, {4096})).pass());
  EXPECT_FALSE(check_lse(per_token({static_cast<float>(measured)}), want, OutputLayout({0}, {1})).pass());
  const OutputLayout long_row({0}, {4096});
  EXPECT_FALSE(check_lse(per_token({static_cast<float>(ref - std::log(8.0 / 7))}), want, long_row).pass());
  EXPECT_FALSE(check_lse(per_token({static_cast<float>(ref / std::log(2.0))}), want, long_row).pass());
  EXPECT_GT(lse_tolerance(ref, 4096), lse_tolerance(ref, 16));
}

// The rounded-P row sum term (check/lse.h): a row whose l a kernel may move by a relative delta
// admits an LSE off by -ln(1 - delta) and no more; without deltas, or with 0, nothing changes.
// bf16 P's largest delta, 2^-8 (every non-max P of the row normal), still rejects the base-2 LSE
// and a split of 8 left out of the merge.
TEST(CheckLse, ARowSumOfRoundedPMovesTheLseByAtMostItsDelta) {
  const double ref = 3.0, delta = 0x1p-8;
  const double shift = -std::log1p(-delta);
  const std::vector<float> want = per_token({static_cast<float>(ref)});
  const std::vector<float> deltas(H, static_cast<float>(delta));
  const OutputLayout row({0}, {1024});
  const auto at = [&](double lse) { return per_token({static_cast<float>(lse)}); };
  EXPECT_TRUE(check_lse(at(ref + shift), want, row, deltas).pass());
  EXPECT_TRUE(check_lse(at(ref - shift), want, row, deltas).pass());
  EXPECT_FALSE(check_lse(at(ref + shift), want, row).pass());  // no deltas: the plain tolerance
  EXPECT_FALSE(check_lse(at(ref + shift), want, row, std::vector<float>(H, 0.0f)).pass());
  const double slack = lse_tolerance(ref, 1024) + 1e-6;  // past the term by more than the rest
  EXPECT_FALSE(check_lse(at(ref + shift + slack), want, row, deltas).pass());
  EXPECT_FALSE(check_lse(at(ref / std::log(2.0)), want, row, deltas).pass());
  EXPECT_FALSE(check_lse(at(ref - std::log(8.0 / 7)), want, row, deltas).pass());
  EXPECT_TRUE(check_lse(at(ref + shift), want, row, deltas).row_sum_rounding);
  EXPECT_NEAR(lse_tolerance(ref, 1024, delta) - lse_tolerance(ref, 1024), shift, 1e-12);
  EXPECT_EQ(lse_tolerance(ref, 1024, 1.0), INFINITY);  // every key's P may round away: any l
  EXPECT_THROW(check_lse(want, want, row, std::vector<float>(H + 1, 0.0f)), std::invalid_argument);
}

TEST(CheckLse, ClassesMustMatch) {
  const OutputLayout layout({0, 0, 0}, {0, 5, 5});
  const std::vector<float> ref = per_token({-kInf, 1.0f, 2.0f});
  EXPECT_EQ(check_lse(per_token({0.0f, 1.0f, 2.0f}), ref, layout).class_mismatches, H);
  EXPECT_EQ(check_lse(per_token({-kInf, std::nanf(""), 2.0f}), ref, layout).class_mismatches, H);
  const std::vector<float> nan_ref = per_token({std::nanf("")});
  EXPECT_FALSE(check_lse(nan_ref, nan_ref, OutputLayout({0}, {3})).pass());  // NaN never matches NaN
  EXPECT_THROW(check_lse(per_token({1.0f}), ref, layout), std::invalid_argument);
  EXPECT_THROW(check_lse(ref, ref, OutputLayout({0}, {3})), std::invalid_argument);  // wrong row count
}

}  // namespace
}  // namespace mlacheck::check
