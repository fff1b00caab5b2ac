#include "ref/decode_common.h"

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"

namespace mlacheck::ref::detail {

void check_q(const problem::Batch& batch, std::size_t q_values) {
  const auto want = static_cast<std::size_t>(batch.total_q()) * problem::kNumHeads * problem::kQkDim;
  if (q_values != want)
    throw problem::ProblemError(fmt::format(
        "q has {} values; total_q = {} queries x {} heads x {} dims need {}", q_values,
        batch.total_q(), problem::kNumHeads, problem::kQkDim, want));
}

void check_cache_size(const problem::Batch& batch, const char* what, std::size_t values,
                      std::size_t row_len) {
  const auto want = static_cast<std::size_t>(batch.cache_rows()) * row_len;
  if (values != want)
    throw problem::ProblemError(fmt::format("{} has {} values; the batch's cache of {} rows x {} needs {}",
                                            what, values, batch.cache_rows(), row_len, want));
}

int64_t work_units(const problem::Batch& batch, int64_t b) {
  int64_t units = 1;
  for (int64_t i = 0; i < batch.q_len(b); ++i) units += batch.visible_kv(b, i);
  return units;
}

int64_t total_work_units(const problem::Batch& batch) {
  int64_t total = 0;
  for (int64_t b = 0; b < batch.num_requests(); ++b) total += work_units(batch, b);
  return total;
}

}  // namespace mlacheck::ref::detail
