#pragma once
// How each request's keys are cut into split-K ranges (ref/decode_emulated.h step 2): the one
// definition the emulated reference and the GPU schedules share (host + device), header only.
#include <cstdint>

#include "quant/hd.h"

namespace mlacheck::problem {

// The merge's limit on splits per request (its weight array).
inline constexpr int kMaxPlanSplits = 256;

struct SplitPlan {
  // Uniform: every request is cut into num_splits ranges of ceil(L / num_splits) keys (trailing
  // ranges may be empty); 0 = no split-K (a single pass).
  int num_splits = 0;
  // Chunked (when > 0): request b is cut into S_b = clamp(ceil(L_b / chunk_keys), 1,
  // kMaxPlanSplits) ranges of ceil(L_b / S_b) keys, so that every range of every request has at
  // most chunk_keys keys (a balanced work list for ragged batches). num_splits is then unused.
  int chunk_keys = 0;

  MLACHECK_HD static constexpr SplitPlan uniform(int splits) { return {splits, 0}; }
  MLACHECK_HD static constexpr SplitPlan chunked(int keys) { return {0, keys}; }

  MLACHECK_HD constexpr bool split_k() const { return chunk_keys > 0 || num_splits > 0; }
  // The split count of a request with kv_len keys: 0 without split-K.
  MLACHECK_HD constexpr int splits_of(int64_t kv_len) const {
    if (chunk_keys <= 0) return num_splits;
    const int64_t s = (kv_len + chunk_keys - 1) / chunk_keys;
    return s < 1 ? 1 : s > kMaxPlanSplits ? kMaxPlanSplits : static_cast<int>(s);
  }
  // The most splits any request can get (bounds buffers): uniform num_splits, chunked the cap
  // for requests of at most max_kv_len keys.
  MLACHECK_HD constexpr int max_splits(int64_t max_kv_len) const {
    return chunk_keys > 0 ? splits_of(max_kv_len) : num_splits;
  }
  constexpr bool operator==(const SplitPlan&) const = default;
};

}  // namespace mlacheck::problem
