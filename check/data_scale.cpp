#include "check/data_scale.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::check {
namespace {
constexpr auto kDim = static_cast<std::size_t>(problem::kQkDim);
constexpr auto kBlock = static_cast<std::size_t>(problem::kMxfp4Block);
constexpr auto kBlocks = static_cast<std::size_t>(problem::kMxfp4RowScales);

// max |x| of each 32-element block of one 576-dim row (NaN/Inf left out, like the moments).
std::array<double, kBlocks> block_maxima(std::span<const double> row) {
  std::array<double, kBlocks> m{};
  for (std::size_t d = 0; d < kDim; ++d)
    if (std::isfinite(row[d])) m[d / kBlock] = std::max(m[d / kBlock], std::fabs(row[d]));
  return m;
}
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
    : batch_(batch),
      read_(static_cast<std::size_t>(batch.cache_rows()), false),
      k_channels_(kDim),
      k_blocks_(kBlocks) {
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
  // Fixed blocks of rows, each summed on its own and merged in block order: the same bits for any
  // thread count (the moments feed the bounds, which must not depend on the machine). Within a
  // block each channel is summed in row order; the loops run across channels (structure of arrays,
  // NaN / Inf masked to 0, which adds nothing to a sum of squares or a maximum of |x|) so that the
  // compiler vectorizes them: x^2 of a bf16 value is exact in float32, so the double sums are the
  // ones an element-by-element loop gives. A row's squared norm is summed in kLanes interleaved
  // partial sums (fixed order), not one chain of 576 dependent adds.
  constexpr int64_t kRowsPerBlock = 1024;
  constexpr std::size_t kLanes = 8;  // one 256-bit vector of float32 (AVX2), a divisor of 32 and 576
  static_assert(kDim % kLanes == 0 && kBlock % kLanes == 0);
  // Each step over a row is its own loop of one type (float maxima and int32 counts within a block
  // of at most kRowsPerBlock rows, widened when the blocks merge: the same values), so that each
  // vectorizes.
  struct Partial {
    std::array<double, kDim> sum_sq{};
    std::array<float, kDim> abs_max{};
    int32_t rows = 0;                        // rows read in the block
    std::array<int32_t, kDim> nonfinite_at{};  // of those, NaN/Inf in channel d
    std::vector<Moments> blocks = std::vector<Moments>(kBlocks);
    double norm_max = 0;
    int64_t nonfinite = 0;
  };
  const int64_t n_blocks = (count + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<Partial> partials(static_cast<std::size_t>(n_blocks));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t blk = 0; blk < n_blocks; ++blk) {
    Partial& p = partials[static_cast<std::size_t>(blk)];
    std::array<float, kDim> x{}, sq{};
    std::array<int32_t, kDim> finite{};
    for (int64_t r = blk * kRowsPerBlock; r < std::min(count, (blk + 1) * kRowsPerBlock); ++r) {
      if (!read_[static_cast<std::size_t>(first + r)]) continue;
      const uint16_t* row = rows.data() + static_cast<std::size_t>(r) * kDim;
      int32_t finite_count = 0;
      for (std::size_t d = 0; d < kDim; ++d) {
        const bool ok = quant::bf16_is_finite(row[d]);
        finite[d] = ok ? 1 : 0;
        finite_count += finite[d];
        x[d] = ok ? std::fabs(quant::bf16_to_f32(row[d])) : 0.0f;
      }
      p.nonfinite += static_cast<int64_t>(kDim) - finite_count;
      ++p.rows;
      if (finite_count < static_cast<int32_t>(kDim))  // rare: count per channel only then
        for (std::size_t d = 0; d < kDim; ++d) p.nonfinite_at[d] += 1 - finite[d];
      for (std::size_t d = 0; d < kDim; ++d) sq[d] = x[d] * x[d];  // exact
      // The whole cache's and V's moments are summed from these.
      for (std::size_t d = 0; d < kDim; ++d) p.sum_sq[d] += static_cast<double>(sq[d]);
      for (std::size_t d = 0; d < kDim; ++d) p.abs_max[d] = std::max(p.abs_max[d], x[d]);
      std::array<double, kLanes> norm{};
      for (std::size_t d = 0; d < kDim; d += kLanes)
        for (std::size_t l = 0; l < kLanes; ++l) norm[l] += static_cast<double>(sq[d + l]);
      double norm_sq = 0;
      for (double lane : norm) norm_sq += lane;
      // A block's maximum in kLanes lanes: the maximum of values that are never NaN is the
      // same in any order, and lanes let the compiler vectorize it (a chain of maxss does not).
      for (std::size_t b = 0; b < kBlocks; ++b) {
        std::array<float, kLanes> lane{};
        for (std::size_t d = b * kBlock; d < (b + 1) * kBlock; d += kLanes)
          for (std::size_t l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], x[d + l]);
        float m = 0;
        for (float v : lane) m = std::max(m, v);
        p.blocks[b].add(m);
      }
      p.norm_max = std::max(p.norm_max, std::sqrt(norm_sq));
    }
  }
  const auto merge = [](Moments& into, const Moments& m) {
    into.sum_sq += m.sum_sq;
    into.abs_max = std::max(into.abs_max, m.abs_max);
    into.n += m.n;
  };
  for (const Partial& p : partials) {
    for (std::size_t d = 0; d < kDim; ++d)
      merge(k_channels_[d], {p.sum_sq[d], static_cast<double>(p.abs_max[d]), static_cast<int64_t>(p.rows - p.nonfinite_at[d])});
    for (std::size_t b = 0; b < kBlocks; ++b) merge(k_blocks_[b], p.blocks[b]);
    k_norm_max_ = std::max(k_norm_max_, p.norm_max);
    nonfinite_ += p.nonfinite;
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
  // Maxima over queries of sum_d q_d^2 E[k_d^2], of sum_d q_d^2 E[amax_b(d)(k)^2] and of
  // sum_d amax_b(d)(q)^2 E[k_d^2].
  double weighted_max = 0, k_block_max = 0, q_block_max = 0;
  std::array<double, kDim> x{};
  for (std::size_t r = 0; r < q_rows; ++r) {
    for (std::size_t d = 0; d < kDim; ++d) x[d] = quant::bf16_to_f32(q[r * kDim + d]);
    const auto maxima = block_maxima(x);
    double norm_sq = 0, weighted = 0, k_block = 0, q_block = 0;
    for (std::size_t d = 0; d < kDim; ++d) {
      if (!std::isfinite(x[d])) {
        ++s.nonfinite;
        continue;
      }
      q_all.add(x[d]);
      const double x2 = x[d] * x[d], k2 = k_channels_[d].mean_sq();
      norm_sq += x2;
      weighted += x2 * k2;
      k_block += x2 * k_blocks_[d / kBlock].mean_sq();
      q_block += maxima[d / kBlock] * maxima[d / kBlock] * k2;
    }
    q_norm_max = std::max(q_norm_max, std::sqrt(norm_sq));
    weighted_max = std::max(weighted_max, weighted);
    k_block_max = std::max(k_block_max, k_block);
    q_block_max = std::max(q_block_max, q_block);
  }
  s.q_rms = std::sqrt(q_all.mean_sq());
  s.q_abs_max = q_all.abs_max;
  Moments kv, v;  // summed over the channels (each element is in exactly one)
  for (std::size_t d = 0; d < kDim; ++d) {
    const Moments& c = k_channels_[d];
    for (Moments* m : {&kv, d < static_cast<std::size_t>(problem::kVDim) ? &v : nullptr}) {
      if (m == nullptr) continue;
      m->sum_sq += c.sum_sq;
      m->abs_max = std::max(m->abs_max, c.abs_max);
      m->n += c.n;
    }
  }
  s.kv_rms = std::sqrt(kv.mean_sq());
  s.kv_abs_max = kv.abs_max;
  s.v_rms = std::sqrt(v.mean_sq());
  s.v_abs_max = v.abs_max;
  for (int d = 0; d < problem::kVDim; ++d)
    s.v_channel_ms.push_back(k_channels_[static_cast<std::size_t>(d)].mean_sq());
  s.score_bound = problem::kSmScale * q_norm_max * k_norm_max_;
  s.score_error_scale = problem::kSmScale * std::sqrt(weighted_max);
  s.score_k_block_scale = problem::kSmScale * std::sqrt(k_block_max);
  s.score_q_block_scale = problem::kSmScale * std::sqrt(q_block_max);
  for (const Moments& b : k_blocks_) s.kv_block_amax_ms.push_back(b.mean_sq());
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
