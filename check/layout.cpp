#include "check/layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mlacheck::check {

OutputLayout::OutputLayout(std::vector<int64_t> request_of_token, std::vector<int64_t> visible_kv)
    : request_(std::move(request_of_token)), visible_kv_(std::move(visible_kv)) {
  if (request_.size() != visible_kv_.size())
    throw std::invalid_argument("OutputLayout: " + std::to_string(request_.size()) +
                                " request indices for " + std::to_string(visible_kv_.size()) +
                                " tokens");
  for (std::size_t t = 0; t < visible_kv_.size(); ++t)
    if (visible_kv_[t] < 0 || request_[t] < 0)
      throw std::invalid_argument("OutputLayout: token " + std::to_string(t) +
                                  " has a negative request index or key count");
}

OutputLayout OutputLayout::from_batch(const problem::Batch& batch) {
  std::vector<int64_t> request, visible;
  request.reserve(static_cast<std::size_t>(batch.total_q()));
  visible.reserve(static_cast<std::size_t>(batch.total_q()));
  for (int64_t b = 0; b < batch.num_requests(); ++b)
    for (int32_t i = 0; i < batch.q_len(b); ++i) {
      request.push_back(b);
      visible.push_back(batch.visible_kv(b, i));
    }
  return OutputLayout(std::move(request), std::move(visible));
}

OutputLayout OutputLayout::uniform(int64_t tokens, int64_t kv_len) {
  std::vector<int64_t> request(static_cast<std::size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) request[static_cast<std::size_t>(t)] = t;
  return OutputLayout(std::move(request),
                      std::vector<int64_t>(static_cast<std::size_t>(tokens), kv_len));
}

int64_t OutputLayout::max_visible_kv() const {
  return visible_kv_.empty() ? 0 : *std::max_element(visible_kv_.begin(), visible_kv_.end());
}

Position OutputLayout::position(int64_t i) const {
  Position p;
  p.dim = static_cast<int>(i % kRowLen);
  const int64_t row = i / kRowLen;
  p.head = static_cast<int>(row % problem::kNumHeads);
  p.token = row / problem::kNumHeads;
  p.request = request_[static_cast<std::size_t>(p.token)];
  return p;
}

}  // namespace mlacheck::check
