#pragma once
#include <stdexcept>

namespace mlacheck::problem {
// An invalid decode problem (bad indptr, index past the cache, wrong dims or dtypes). The message
// says what is wrong and where, e.g. "kv_indptr[3] = 10 < kv_indptr[2] = 12 (not monotonic)".
class ProblemError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
}  // namespace mlacheck::problem
