// Metrics on hand-made tensors with known answers.
#include "check/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "check/layout.h"
#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// One token (16 rows of 512) with bf16-representable values that vary along the row.
std::vector<float> ramp(const OutputLayout& layout) {
  std::vector<float> x(static_cast<std::size_t>(layout.elements()));
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = quant::bf16_to_f32(quant::f32_to_bf16(static_cast<float>((i % 37) + 1) * 1e-4f));
  return x;
}

TEST(CheckMetrics, IdenticalTensors) {
  const auto layout = OutputLayout::uniform(2, 8);
  const auto x = ramp(layout);
  const Metrics m = measure(x, x, layout, nullptr, 4);
  EXPECT_EQ(m.compared, layout.elements());
  EXPECT_EQ(m.max_abs_err, 0);
  EXPECT_EQ(m.rel_fro_err, 0);
  EXPECT_DOUBLE_EQ(m.cosine, 1);
  EXPECT_TRUE(m.bitwise_equal);
  EXPECT_EQ(m.ulps.count[0], layout.elements());
  EXPECT_TRUE(m.pass());
}

TEST(CheckMetrics, ParallelAntiParallelAndOrthogonal) {
  const auto layout = OutputLayout::uniform(1, 8);
  const auto x = ramp(layout);
  std::vector<float> twice(x), negated(x), ortho(x.size(), 0.0f), ref_ortho(x.size(), 0.0f);
  for (float& v : twice) v *= 2;  // exact in bf16
  for (float& v : negated) v = -v;
  // Disjoint supports: even elements in one, odd in the other.
  for (std::size_t i = 0; i < x.size(); ++i) (i % 2 == 0 ? ortho : ref_ortho)[i] = x[i];

  const Metrics p = measure(twice, x, layout, nullptr, 0);
  EXPECT_NEAR(p.cosine, 1, 1e-12);
  EXPECT_NEAR(p.rel_fro_err, 1, 1e-12);  // ||2x - x|| / ||x||
  EXPECT_NEAR(p.worst_cosine_row.cosine, 1, 1e-12);
  EXPECT_NEAR(p.max_rel_err, 1, 1e-12);

  const Metrics a = measure(negated, x, layout, nullptr, 0);
  EXPECT_NEAR(a.cosine, -1, 1e-12);
  EXPECT_NEAR(a.rel_fro_err, 2, 1e-12);

  const Metrics o = measure(ortho, ref_ortho, layout, nullptr, 0);
  EXPECT_NEAR(o.cosine, 0, 1e-12);

  const Metrics z = measure(std::vector<float>(x.size(), 0.0f), x, layout, nullptr, 0);
  EXPECT_EQ(z.cosine, 0);  // one side all zero
  EXPECT_NEAR(z.rel_fro_err, 1, 1e-12);
}

TEST(CheckMetrics, WorstElementsAndRowsWithTheirPositions) {
  const auto layout = OutputLayout::uniform(3, 8);
  const auto ref = ramp(layout);
  auto got = ref;
  // token 2, head 5, dim 100 gets the largest error; token 1, head 0, dim 7 the second.
  const std::size_t big = (2 * 16 + 5) * 512 + 100, second = (1 * 16 + 0) * 512 + 7;
  got[big] += 1e-2f;
  got[second] -= 5e-3f;
  const Metrics m = measure(got, ref, layout, nullptr, 2);
  EXPECT_NEAR(m.max_abs_err, 1e-2, 1e-6);
  EXPECT_EQ(m.max_abs_at.pos.token, 2);
  EXPECT_EQ(m.max_abs_at.pos.request, 2);
  EXPECT_EQ(m.max_abs_at.pos.head, 5);
  EXPECT_EQ(m.max_abs_at.pos.dim, 100);
  ASSERT_EQ(m.worst.size(), 2u);
  EXPECT_EQ(m.worst[0].index, static_cast<int64_t>(big));
  EXPECT_EQ(m.worst[1].index, static_cast<int64_t>(second));
  EXPECT_EQ(m.worst[1].pos.token, 1);
  EXPECT_EQ(m.worst[1].pos.dim, 7);
  EXPECT_EQ(m.worst_cosine_row.token, 2);
  EXPECT_EQ(m.worst_cosine_row.head, 5);
  EXPECT_EQ(m.worst_row.token, 2);
  EXPECT_LT(m.worst_cosine_row.cosine, 1);
  EXPECT_FALSE(m.bitwise_equal);
}

TEST(CheckMetrics, UlpHistogramOfKnownShifts) {
  const auto layout = OutputLayout::uniform(1, 8);
  const auto ref = ramp(layout);
  auto got = ref;
  // Move element i by (i % 4) bf16 steps up: 0, 1, 2, 3 ulps in equal numbers.
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto bits = quant::f32_to_bf16(ref[i]);
    got[i] = quant::bf16_to_f32(static_cast<uint16_t>(bits + i % 4));
  }
  const Metrics m = measure(got, ref, layout, nullptr, 0);
  const int64_t quarter = layout.elements() / 4;
  EXPECT_EQ(m.ulps.count[0], quarter);
  EXPECT_EQ(m.ulps.count[1], quarter);
  EXPECT_EQ(m.ulps.count[2], quarter);
  EXPECT_EQ(m.ulps.count[3], quarter);  // the 3-4 bucket
  EXPECT_EQ(m.ulps.max, 3u);
}

TEST(CheckMetrics, NanAndInfPositionsComparedFirst) {
  const auto layout = OutputLayout::uniform(1, 8);
  auto ref = ramp(layout);
  auto got = ref;
  got[10] = kNaN;  // NaN where the reference has a number: a mismatch
  got[20] = kNaN;  // NaN in both: matched, left out of the numbers
  ref[20] = kNaN;
  got[30] = kInf;  // +Inf vs -Inf: a mismatch
  ref[30] = -kInf;
  got[40] = -kInf;  // -Inf in both: matched
  ref[40] = -kInf;
  const Metrics m = measure(got, ref, layout, nullptr, 3);
  EXPECT_EQ(m.anomalies.got.nan, 2);
  EXPECT_EQ(m.anomalies.ref.nan, 1);
  EXPECT_EQ(m.anomalies.got.pos_inf, 1);
  EXPECT_EQ(m.anomalies.ref.neg_inf, 2);
  EXPECT_EQ(m.anomalies.mismatches, 2);
  EXPECT_EQ(m.anomalies.first, (std::vector<int64_t>{10, 30}));
  EXPECT_FALSE(m.pass());
  EXPECT_EQ(m.compared, layout.elements() - 4);
  EXPECT_EQ(m.max_abs_err, 0);  // the finite elements agree
  // Both NaN at the same place, and nothing else: the comparison passes.
  auto both = ramp(layout);
  both[5] = kNaN;
  const Metrics same = measure(both, both, layout, nullptr, 0);
  EXPECT_TRUE(same.anomalies.ok());
  EXPECT_TRUE(same.pass());
  EXPECT_DOUBLE_EQ(same.pass_pct, 100.0);
}

TEST(CheckMetrics, AgainstABoundCountsElementsAndRows) {
  const auto layout = OutputLayout::uniform(1, 8);
  const auto ref = ramp(layout);
  auto got = ref;
  Bound b;
  b.name = "test";
  b.elem_rel_rms = {0.0};
  b.elem_abs = {1e-6};
  b.has_row_bound = true;
  b.row_rel_rms = {0.0};
  b.row_abs = {1e-6};
  got[3] += 2e-6f;  // beyond the element bound, and its row's RMS (2e-6 / sqrt 512) is within
  const Metrics m = measure(got, ref, layout, &b, 1);
  EXPECT_EQ(m.elements_within, layout.elements() - 1);
  EXPECT_EQ(m.rows_within, m.rows);
  EXPECT_NEAR(m.pass_pct, 100.0 * (layout.elements() - 1) / layout.elements(), 1e-9);
  EXPECT_FALSE(m.pass());
  ASSERT_EQ(m.worst.size(), 1u);
  EXPECT_EQ(m.worst[0].index, 3);
  EXPECT_DOUBLE_EQ(m.worst[0].tolerance, 1e-6);
  // A row whose every element errs by 0.9e-6: all elements within, the row's RMS (0.9e-6) not
  // within a row bound of 0.5e-6.
  b.row_abs = {0.5e-6};
  auto shifted = ref;
  for (std::size_t i = 0; i < 512; ++i) shifted[i] = static_cast<float>(ref[i] + 0.9e-6);
  const Metrics r = measure(shifted, ref, layout, &b, 0);
  EXPECT_EQ(r.elements_within, r.compared);
  EXPECT_EQ(r.rows_within, r.rows - 1);
  EXPECT_FALSE(r.pass());
}

TEST(CheckLayout, CausalBatchPositions) {
  // Two requests: 2 queries over 5 keys, then 1 query over 0 keys (empty).
  const problem::Batch batch({0, 2, 3}, {0, 5, 5}, {}, 1, 5);
  const auto layout = OutputLayout::from_batch(batch);
  ASSERT_EQ(layout.tokens(), 3);
  EXPECT_EQ(layout.visible_kv(0), 4);  // query 0 of 2 sees keys 0 .. 3
  EXPECT_EQ(layout.visible_kv(1), 5);
  EXPECT_EQ(layout.visible_kv(2), 0);
  EXPECT_EQ(layout.request(2), 1);
  EXPECT_EQ(layout.max_visible_kv(), 5);
  const Position p = layout.position((2 * 16 + 3) * 512 + 9);
  EXPECT_EQ(p.token, 2);
  EXPECT_EQ(p.request, 1);
  EXPECT_EQ(p.head, 3);
  EXPECT_EQ(p.dim, 9);
}

}  // namespace
}  // namespace mlacheck::check
