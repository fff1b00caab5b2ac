#pragma once
// The batch layout of one decode call: CSR over requests, optionally a paged cache.
//
//   qo_indptr  [B+1]  query rows of request b are qo_indptr[b] .. qo_indptr[b+1]-1 (q_len_b >= 1)
//   kv_indptr  [B+1]  request b has L_b = kv_indptr[b+1] - kv_indptr[b] keys (0 allowed: empty)
//   kv_indices [P]    optional page table. Without it the cache is contiguous: key t of request b
//                     is cache row kv_indptr[b] + t. With it, request b owns ceil(L_b / page_size)
//                     consecutive entries of kv_indices starting at page_indptr(b) (the prefix sum
//                     of those counts), and key t lives in cache row
//                     kv_indices[page_indptr(b) + t / page_size] * page_size + t % page_size.
//                     With page_size 1 this is the harness's layout (kv_indices indexed by kv_indptr).
//   page_size         >= 1; the cache has a whole number of pages when kv_indices is given.
//
// q_seq_len > 1 is causal as in speculative decoding: query i of a request with L keys and q_len
// queries sees keys 0 .. L - q_len + i (none when that is negative).
#include <cstdint>
#include <span>
#include <vector>

namespace mlacheck::problem {

class Batch {
 public:
  // Validates everything against a cache of `cache_rows` rows; throws ProblemError with the index
  // and values at fault: empty or mismatched indptr sizes, indptr not starting at 0 or decreasing,
  // q_len outside 1..kMaxQSeqLen, page_size < 1, page table too short or too long, a page index
  // negative or past the cache, a contiguous layout longer than the cache.
  Batch(std::vector<int32_t> qo_indptr, std::vector<int32_t> kv_indptr,
        std::vector<int32_t> kv_indices, int32_t page_size, int64_t cache_rows);

  // The common case: B requests of kv_len keys and q_len queries, contiguous cache.
  static Batch uniform(int32_t batch, int32_t kv_len, int32_t q_len = 1);

  int64_t num_requests() const { return static_cast<int64_t>(kv_indptr_.size()) - 1; }
  int64_t total_q() const { return qo_indptr_.back(); }
  int64_t total_kv() const { return kv_indptr_.back(); }
  int32_t q_len(int64_t b) const { return qo_indptr_[b + 1] - qo_indptr_[b]; }
  int32_t kv_len(int64_t b) const { return kv_indptr_[b + 1] - kv_indptr_[b]; }
  // The longest request's key count (0 without requests).
  int32_t max_kv_len() const {
    int32_t most = 0;
    for (int64_t b = 0; b < num_requests(); ++b) most = kv_len(b) > most ? kv_len(b) : most;
    return most;
  }
  int32_t page_size() const { return page_size_; }
  bool paged() const { return !kv_indices_.empty(); }
  int64_t cache_rows() const { return cache_rows_; }

  std::span<const int32_t> qo_indptr() const { return qo_indptr_; }
  std::span<const int32_t> kv_indptr() const { return kv_indptr_; }
  std::span<const int32_t> kv_indices() const { return kv_indices_; }
  // [B+1] start of request b's pages in kv_indices (derived; empty when not paged).
  std::span<const int64_t> page_indptr() const { return page_indptr_; }

  // Cache row of key t (0 <= t < kv_len(b)) of request b.
  int64_t kv_row(int64_t b, int64_t t) const {
    if (kv_indices_.empty()) return kv_indptr_[b] + t;
    const int64_t page = kv_indices_[page_indptr_[b] + t / page_size_];
    return page * page_size_ + t % page_size_;
  }
  // Number of keys query i (0-based) of request b sees: the causal rule above, never negative.
  int64_t visible_kv(int64_t b, int64_t i) const {
    const int64_t n = static_cast<int64_t>(kv_len(b)) - q_len(b) + i + 1;
    return n < 0 ? 0 : n;
  }

 private:
  std::vector<int32_t> qo_indptr_, kv_indptr_, kv_indices_;
  std::vector<int64_t> page_indptr_;
  int32_t page_size_ = 1;
  int64_t cache_rows_ = 0;
};

}  // namespace mlacheck::problem
