#pragma once
// Where each element of a decode output [T, 16, 512] sits: which token (query row), which request
// that token belongs to, which head and dim; and how many keys each token attended to, which the
// bounds of tolerance.h need (accumulation length, largest possible weight).
#include <cstdint>
#include <vector>

#include "problem/batch.h"
#include "problem/shape.h"

namespace mlacheck::check {

inline constexpr int64_t kRowLen = problem::kVDim;  // one (token, head) row of the output

struct Position {
  int64_t token = 0;
  int64_t request = 0;
  int head = 0;
  int dim = 0;
};

class OutputLayout {
 public:
  // request_of_token[t] and visible_kv[t] (keys token t attends to, 0 for an empty sequence) for
  // every token; both the same length. Throws std::invalid_argument otherwise or on negatives.
  OutputLayout(std::vector<int64_t> request_of_token, std::vector<int64_t> visible_kv);

  // The batch's tokens in qo_indptr order, with the causal visible-key count of each.
  static OutputLayout from_batch(const problem::Batch& batch);
  // `tokens` requests of one query each, all with kv_len keys (the harness's layout).
  static OutputLayout uniform(int64_t tokens, int64_t kv_len);

  int64_t tokens() const { return static_cast<int64_t>(visible_kv_.size()); }
  int64_t rows() const { return tokens() * problem::kNumHeads; }
  int64_t elements() const { return rows() * kRowLen; }
  int64_t request(int64_t token) const { return request_[token]; }
  int64_t visible_kv(int64_t token) const { return visible_kv_[token]; }
  int64_t max_visible_kv() const;

  // The element at flat index i of the row-major [T, 16, 512] tensor.
  Position position(int64_t i) const;

 private:
  std::vector<int64_t> request_, visible_kv_;
};

}  // namespace mlacheck::check
