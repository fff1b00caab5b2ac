#pragma once
// The few statistics of a problem's inputs that the bounds of tolerance.h depend on: sizes of q,
// the KV cache and V, and bounds on the attention scores. Norms and maxima only: computing them
// reads the inputs once and runs no attention.
#include <cstdint>
#include <span>
#include <vector>

#include "problem/batch.h"

namespace mlacheck::check {

struct DataScale {
  double q_rms = 0, q_abs_max = 0;    // over every element of q [T, 16, 576]
  double kv_rms = 0, kv_abs_max = 0;  // over the 576 dims of every cache row the batch reads
  double v_rms = 0, v_abs_max = 0;    // the same rows, first 512 dims (V)
  // Mean square of each V channel d over those rows (512 values; empty = unknown). Channels of
  // different size (outlier channels) make outputs of different size; the total bound scales its
  // element tolerance by them (tolerance.cpp, "Channel profile").
  std::vector<double> v_channel_ms;
  // A = sm_scale * max ||q[t, h]|| * max ||k[row]||: by Cauchy-Schwarz |score| <= A for every
  // (query, key) pair, so score differences are <= 2A and every softmax weight exp(s - max) is
  // >= exp(-2A).
  double score_bound = 0;
  // S = sm_scale * max over queries of sqrt(sum_d q_d^2 E_key[k_d^2]): the RMS over keys of
  // sm_scale * sqrt(sum_d q_d^2 k_d^2), the size of a score's rounding error per unit relative
  // error of its products (tolerance.cpp). Per channel, so outlier channels shared by q and k
  // count.
  double score_error_scale = 0;
  // Block-scaled formats (MXFP4: one scale per 32 elements) quantize every element of a block on
  // a grid set by the block's largest element, so a block holding an outlier channel gives its
  // other channels errors of the outlier's size. Hence, per block b of 32 dims:
  std::vector<double> kv_block_amax_ms;  // mean over the rows read of (max |k| in block b)^2 (18)
  // and the score scale S with one side replaced by its blocks' maxima:
  //   score_k_block_scale = sm_scale * max_q sqrt(sum_d q_d^2 E_key[amax_b(d)(k)^2])
  //   score_q_block_scale = sm_scale * max_q sqrt(sum_d amax_b(d)(q)^2 E_key[k_d^2])
  double score_k_block_scale = 0, score_q_block_scale = 0;
  int64_t nonfinite = 0;  // NaN/Inf input elements, left out of the statistics above
};

// Streams the cache (which may be far larger than memory) row block by row block. Only rows that
// some request reads count, so unused (possibly poisoned) cache rows change nothing.
class DataScaleAccumulator {
 public:
  explicit DataScaleAccumulator(const problem::Batch& batch);  // batch must outlive it
  // Cache rows [first, first + n) as bf16 bits [n, 576]; each row at most once, in any order.
  // Throws std::invalid_argument for a range outside the cache or a size not a multiple of 576.
  void add_cache_rows(int64_t first, std::span<const uint16_t> rows_bf16);
  // q: bf16 bits [total_q, 16, 576], after every cache row. Throws std::invalid_argument on size.
  DataScale finish(std::span<const uint16_t> q_bf16);

 private:
  struct Moments {
    double sum_sq = 0, abs_max = 0;
    int64_t n = 0;
    void add(double x);
    double mean_sq() const;
  };
  const problem::Batch& batch_;
  std::vector<bool> read_;  // rows some request reads
  std::vector<Moments> k_channels_;  // 576; the first 512 are V's
  std::vector<Moments> k_blocks_;    // 18: the block maxima of each row
  double k_norm_max_ = 0;
  int64_t nonfinite_ = 0;
};

// The whole cache at once. kv: bf16 bits [cache_rows, 576] (the [N, 1, 576] cache).
DataScale data_scale(std::span<const uint16_t> q_bf16, std::span<const uint16_t> kv_bf16,
                     const problem::Batch& batch);

}  // namespace mlacheck::check
