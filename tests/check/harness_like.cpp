#include "tests/check/harness_like.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::check::testing {
namespace {

// randn * 0.02 in bf16, the harness's two roundings (randn in bf16, then the product).
std::vector<uint16_t> randn_bf16(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  const float scale = 0.02f;
  std::vector<uint16_t> out(n);
  for (uint16_t& x : out) {
    const float r = quant::bf16_to_f32(quant::f32_to_bf16(normal(rng)));
    x = quant::f32_to_bf16(r * scale);
  }
  return out;
}

}  // namespace

HarnessLike harness_like(int32_t batch, int32_t kv_len, uint32_t seed) {
  using problem::kNumHeads;
  using problem::kQkDim;
  using problem::kVDim;
  std::mt19937 rng(seed);
  problem::Batch b = problem::Batch::uniform(batch, kv_len);
  auto q = randn_bf16(static_cast<std::size_t>(b.total_q() * kNumHeads * kQkDim), rng);
  auto kv = randn_bf16(static_cast<std::size_t>(b.cache_rows() * kQkDim), rng);

  // Scores of the harness's size: sm_scale * |q| |k| ~ 0.01 (NUMERICS §6.2 magnitudes).
  std::normal_distribution<double> score(0.0, 0.01);
  std::vector<float> exact(static_cast<std::size_t>(b.total_q() * kNumHeads * kVDim));
  std::vector<double> w(static_cast<std::size_t>(kv_len)), acc(kVDim);
  for (int64_t r = 0; r < b.num_requests(); ++r)
    for (int h = 0; h < kNumHeads; ++h) {
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(score(rng)));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int32_t t = 0; t < kv_len; ++t) {
        const auto row = static_cast<std::size_t>(b.kv_row(r, t) * kQkDim);
        for (int d = 0; d < kVDim; ++d)
          acc[static_cast<std::size_t>(d)] +=
              w[static_cast<std::size_t>(t)] *
              quant::bf16_to_f32(kv[row + static_cast<std::size_t>(d)]);
      }
      const auto out = static_cast<std::size_t>((r * kNumHeads + h) * kVDim);
      for (int d = 0; d < kVDim; ++d)
        exact[out + static_cast<std::size_t>(d)] =
            static_cast<float>(acc[static_cast<std::size_t>(d)] / sum);
    }
  OutputLayout layout = OutputLayout::from_batch(b);
  DataScale data = data_scale(q, kv, b);
  return {std::move(b),     std::move(q),      std::move(kv),
          std::move(exact), std::move(layout), std::move(data)};
}

std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = quant::f32_to_bf16(x[i]);
  return out;
}

std::vector<float> widen(const std::vector<uint16_t>& bits) {
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = quant::bf16_to_f32(bits[i]);
  return out;
}

}  // namespace mlacheck::check::testing
