#include "check/data_scale.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::check {
namespace {
constexpr auto kDim = static_cast<std::size_t>(problem::kQkDim);
}  // namespace

void DataScaleAccumulator::Moments::add(double x) {
  sum_sq += x * x;
  abs_max = std::max(abs_max, std::fabs(x));
  ++n;
}

double DataScaleAccumulator::Moments::mean_sq() const {
  return n > 0 ? sum_sq / static_cast<double>(n) : 0.0;
}

DataScaleAccumulator::DataScaleAccumulator(const problem::Batch& batch)
    : batch_(batch), read_(static_cast<std::size_t>(batch.cache_rows()), false), k_channels_(kDim) {
  for (int64_t b = 0; b < batch.num_requests(); ++b)
    for (int64_t t = 0; t < batch.kv_len(b); ++t)
      read_[static_cast<std::size_t>(batch.kv_row(b, t))] = true;
}

void DataScaleAccumulator::add_cache_rows(int64_t first, std::span<const uint16_t> rows) {
  const int64_t count = static_cast<int64_t>(rows.size() / kDim);
  if (rows.size() % kDim != 0 || first < 0 || first + count > batch_.cache_rows())
    throw std::invalid_argument("data_scale: cache rows [" + std::to_string(first) + ", +" +
                                std::to_string(rows.size()) + " values) do not fit a cache of " +
                                std::to_string(batch_.cache_rows()) + " rows of " +
                                std::to_string(problem::kQkDim));
  for (int64_t r = 0; r < count; ++r) {
    if (!read_[static_cast<std::size_t>(first + r)]) continue;
    double norm_sq = 0;
    for (std::size_t d = 0; d < kDim; ++d) {
      const double x = quant::bf16_to_f32(rows[static_cast<std::size_t>(r) * kDim + d]);
      if (!std::isfinite(x)) {
        ++nonfinite_;
        continue;
      }
      norm_sq += x * x;
      kv_.add(x);
      k_channels_[d].add(x);
      if (d < static_cast<std::size_t>(problem::kVDim)) v_.add(x);
    }
    k_norm_max_ = std::max(k_norm_max_, std::sqrt(norm_sq));
  }
}

DataScale DataScaleAccumulator::finish(std::span<const uint16_t> q) {
  const auto q_rows = static_cast<std::size_t>(batch_.total_q() * problem::kNumHeads);
  if (q.size() != q_rows * kDim)
    throw std::invalid_argument("data_scale: q has " + std::to_string(q.size()) +
                                " elements, the batch needs " + std::to_string(q_rows * kDim));
  DataScale s;
  Moments q_all;
  double q_norm_max = 0;
  double q_weighted_max = 0;  // max over queries of sum_d q_d^2 E[k_d^2]
  for (std::size_t r = 0; r < q_rows; ++r) {
    double norm_sq = 0, weighted = 0;
    for (std::size_t d = 0; d < kDim; ++d) {
      const double x = quant::bf16_to_f32(q[r * kDim + d]);
      if (!std::isfinite(x)) {
        ++s.nonfinite;
        continue;
      }
      q_all.add(x);
      norm_sq += x * x;
      weighted += x * x * k_channels_[d].mean_sq();
    }
    q_norm_max = std::max(q_norm_max, std::sqrt(norm_sq));
    q_weighted_max = std::max(q_weighted_max, weighted);
  }
  s.q_rms = std::sqrt(q_all.mean_sq());
  s.q_abs_max = q_all.abs_max;
  s.kv_rms = std::sqrt(kv_.mean_sq());
  s.kv_abs_max = kv_.abs_max;
  s.v_rms = std::sqrt(v_.mean_sq());
  s.v_abs_max = v_.abs_max;
  for (int d = 0; d < problem::kVDim; ++d)
    s.v_channel_ms.push_back(k_channels_[static_cast<std::size_t>(d)].mean_sq());
  s.score_bound = problem::kSmScale * q_norm_max * k_norm_max_;
  s.score_error_scale = problem::kSmScale * std::sqrt(q_weighted_max);
  s.nonfinite += nonfinite_;
  return s;
}

DataScale data_scale(std::span<const uint16_t> q_bf16, std::span<const uint16_t> kv_bf16,
                     const problem::Batch& batch) {
  if (kv_bf16.size() != static_cast<std::size_t>(batch.cache_rows()) * kDim)
    throw std::invalid_argument("data_scale: kv has " + std::to_string(kv_bf16.size()) +
                                " elements, the batch's cache has " +
                                std::to_string(batch.cache_rows()) + " rows of " +
                                std::to_string(problem::kQkDim));
  DataScaleAccumulator acc(batch);
  acc.add_cache_rows(0, kv_bf16);
  return acc.finish(q_bf16);
}

}  // namespace mlacheck::check
