#pragma once
// Pieces shared by the exact and the emulated decode: input checks and work accounting.
#include <cstdint>
#include <span>

#include "problem/batch.h"

namespace mlacheck::ref::detail {

// Keys decoded at a time: 64 rows of 576 doubles are 288 KiB and stay in L2.
inline constexpr int64_t kKeyChunk = 64;

// Throws problem::ProblemError unless q holds total_q x 16 x 576 values and kv_values is the
// number of values of a cache of batch.cache_rows() rows with row_len values each.
void check_q(const problem::Batch& batch, std::size_t q_values);
void check_cache_size(const problem::Batch& batch, const char* what, std::size_t values,
                      std::size_t row_len);

// Progress units of request b: one per (query, visible key), plus one so empty requests count.
int64_t work_units(const problem::Batch& batch, int64_t b);
int64_t total_work_units(const problem::Batch& batch);

}  // namespace mlacheck::ref::detail
