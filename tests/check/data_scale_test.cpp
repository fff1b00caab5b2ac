// The input statistics the bounds use.
#include "check/data_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;

TEST(CheckDataScale, NormsMaximaAndScoreBound) {
  // One request, one query, two keys; q all 0.5, key rows all 0.25 except V dim 3 of row 1 = 2.
  const problem::Batch batch = problem::Batch::uniform(1, 2);
  std::vector<uint16_t> q(kNumHeads * kQkDim, quant::f32_to_bf16(0.5f));
  std::vector<uint16_t> kv(2 * kQkDim, quant::f32_to_bf16(0.25f));
  kv[kQkDim + 3] = quant::f32_to_bf16(2.0f);
  const DataScale s = data_scale(q, kv, batch);
  EXPECT_DOUBLE_EQ(s.q_rms, 0.5);
  EXPECT_DOUBLE_EQ(s.q_abs_max, 0.5);
  EXPECT_DOUBLE_EQ(s.kv_abs_max, 2.0);
  EXPECT_DOUBLE_EQ(s.v_abs_max, 2.0);
  const double k1_norm = std::sqrt((kQkDim - 1) * 0.0625 + 4.0);
  EXPECT_NEAR(s.score_bound, problem::kSmScale * 0.5 * std::sqrt(kQkDim) * k1_norm, 1e-12);
  ASSERT_EQ(s.v_channel_ms.size(), static_cast<std::size_t>(kVDim));
  EXPECT_DOUBLE_EQ(s.v_channel_ms[0], 0.0625);
  EXPECT_DOUBLE_EQ(s.v_channel_ms[3], (0.0625 + 4.0) / 2);
  // S = sm_scale sqrt(sum_d q_d^2 E[k_d^2]) with E[k_3^2] = (0.0625 + 4) / 2.
  const double weighted = 0.25 * ((kQkDim - 1) * 0.0625 + (0.0625 + 4.0) / 2);
  EXPECT_NEAR(s.score_error_scale, problem::kSmScale * std::sqrt(weighted), 1e-12);
  // Block maxima: block 0 of row 1 holds the 2; every other block's maximum is 0.25.
  ASSERT_EQ(s.kv_block_amax_ms.size(), 18u);
  EXPECT_DOUBLE_EQ(s.kv_block_amax_ms[0], (0.0625 + 4.0) / 2);
  EXPECT_DOUBLE_EQ(s.kv_block_amax_ms[1], 0.0625);
  // sum_d q_d^2 E[amax_b(d)^2]: 32 dims of block 0, 544 of the others.
  const double k_block = 0.25 * (32 * (0.0625 + 4.0) / 2 + 544 * 0.0625);
  EXPECT_NEAR(s.score_k_block_scale, problem::kSmScale * std::sqrt(k_block), 1e-12);
  // q is constant, so its block maxima equal its elements: the same sum as S.
  EXPECT_NEAR(s.score_q_block_scale, s.score_error_scale, 1e-12);
  EXPECT_EQ(s.nonfinite, 0);
}

TEST(CheckDataScale, UnreadRowsDoNotCount) {
  // Paged: the request reads page 1 only; page 0 is poisoned with NaN and huge values.
  const problem::Batch batch({0, 1}, {0, 1}, {1}, 1, 2);
  std::vector<uint16_t> q(kNumHeads * kQkDim, quant::f32_to_bf16(0.5f));
  std::vector<uint16_t> kv(2 * kQkDim, quant::f32_to_bf16(1e30f));
  kv[0] = quant::f32_to_bf16(std::nanf(""));
  for (int d = 0; d < kQkDim; ++d) kv[kQkDim + d] = quant::f32_to_bf16(0.25f);
  const DataScale s = data_scale(q, kv, batch);
  EXPECT_DOUBLE_EQ(s.kv_abs_max, 0.25);
  EXPECT_EQ(s.nonfinite, 0);
  EXPECT_THROW(data_scale(q, std::vector<uint16_t>(kQkDim), batch), std::invalid_argument);
}

}  // namespace
}  // namespace mlacheck::check
