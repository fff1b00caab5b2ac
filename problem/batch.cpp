#include "problem/batch.h"

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"

namespace mlacheck::problem {
namespace {

void check_indptr(const std::vector<int32_t>& p, const char* name) {
  if (p.empty()) throw ProblemError(fmt::format("{} is empty; it needs B+1 entries", name));
  if (p[0] != 0) throw ProblemError(fmt::format("{}[0] = {}, must be 0", name, p[0]));
  for (std::size_t i = 1; i < p.size(); ++i)
    if (p[i] < p[i - 1])
      throw ProblemError(fmt::format("{}[{}] = {} < {}[{}] = {} (not monotonic)", name, i, p[i],
                                     name, i - 1, p[i - 1]));
}

}  // namespace

Batch::Batch(std::vector<int32_t> qo_indptr, std::vector<int32_t> kv_indptr,
             std::vector<int32_t> kv_indices, int32_t page_size, int64_t cache_rows)
    : qo_indptr_(std::move(qo_indptr)),
      kv_indptr_(std::move(kv_indptr)),
      kv_indices_(std::move(kv_indices)),
      page_size_(page_size),
      cache_rows_(cache_rows) {
  check_indptr(qo_indptr_, "qo_indptr");
  check_indptr(kv_indptr_, "kv_indptr");
  if (qo_indptr_.size() != kv_indptr_.size())
    throw ProblemError(fmt::format("qo_indptr has {} entries but kv_indptr has {} (batch sizes differ)",
                                   qo_indptr_.size(), kv_indptr_.size()));
  for (int64_t b = 0; b < num_requests(); ++b)
    if (q_len(b) < 1 || q_len(b) > kMaxQSeqLen)
      throw ProblemError(fmt::format("request {} has q_seq_len {} (qo_indptr[{}..{}]); supported: 1..{}",
                                     b, q_len(b), b, b + 1, kMaxQSeqLen));
  if (page_size_ < 1) throw ProblemError(fmt::format("page_size = {}, must be >= 1", page_size_));
  if (cache_rows_ < 0) throw ProblemError(fmt::format("cache has {} rows", cache_rows_));

  if (kv_indices_.empty()) {
    // A paged batch whose requests are all empty has a page table of no page: nothing is read.
    if (page_size_ != 1 && total_kv() > 0)
      throw ProblemError(fmt::format("page_size = {} without kv_indices; a contiguous cache has page_size 1",
                                     page_size_));
    if (total_kv() > cache_rows_)
      throw ProblemError(fmt::format("kv_indptr ends at {} but the cache has only {} rows", total_kv(),
                                     cache_rows_));
    return;
  }
  if (cache_rows_ % page_size_ != 0)
    throw ProblemError(fmt::format("cache has {} rows, not a whole number of pages of {}", cache_rows_,
                                   page_size_));
  const int64_t num_pages = cache_rows_ / page_size_;
  page_indptr_.assign(kv_indptr_.size(), 0);
  for (int64_t b = 0; b < num_requests(); ++b)
    // 64-bit: kv_len + page_size - 1 overflows int32 near 2^31 (found by UBSan).
    page_indptr_[b + 1] = page_indptr_[b] + (int64_t{kv_len(b)} + page_size_ - 1) / page_size_;
  if (page_indptr_.back() != static_cast<int64_t>(kv_indices_.size()))
    throw ProblemError(fmt::format("kv_indices has {} entries; the lengths in kv_indptr with page_size {} "
                                   "need {}", kv_indices_.size(), page_size_, page_indptr_.back()));
  for (std::size_t i = 0; i < kv_indices_.size(); ++i)
    if (kv_indices_[i] < 0 || kv_indices_[i] >= num_pages)
      throw ProblemError(fmt::format("kv_indices[{}] = {} is past the cache ({} pages of {} rows)", i,
                                     kv_indices_[i], num_pages, page_size_));
}

Batch Batch::uniform(int32_t batch, int32_t kv_len, int32_t q_len) {
  if (batch < 0 || kv_len < 0)
    throw ProblemError(fmt::format("batch {} x kv_len {}: both must be >= 0", batch, kv_len));
  // indptr is int32 like the harness's.
  if (static_cast<int64_t>(batch) * kv_len > INT32_MAX || static_cast<int64_t>(batch) * q_len > INT32_MAX)
    throw ProblemError(fmt::format("batch {} x kv_len {} overflows int32 indptr", batch, kv_len));
  std::vector<int32_t> qo(static_cast<std::size_t>(batch) + 1), kv(qo.size());
  for (int64_t b = 0; b <= batch; ++b) {  // 64-bit: b <= INT32_MAX never ends in int32
    qo[b] = static_cast<int32_t>(b * q_len);
    kv[b] = static_cast<int32_t>(b * kv_len);
  }
  return Batch(std::move(qo), std::move(kv), {}, 1, static_cast<int64_t>(batch) * kv_len);
}

}  // namespace mlacheck::problem
