#pragma once
// Shared by the bulk quantizers: argument checks (a mismatch is a caller bug, reported with the
// function's name and both sizes) and the size below which they stay single-threaded.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace mlacheck::quant::detail {

// Below this many elements the bulk quantizers run on one thread: waking a team costs more than
// the work (measured: tens of ms for a 3-element tensor on a busy 2-core machine). Results do not
// depend on it, the work being elementwise with exact max reductions.
inline constexpr std::size_t kMinParallelWork = std::size_t{1} << 14;

inline void require_size(const char* func, const char* what, std::size_t actual,
                         std::size_t expected, const char* rule) {
  if (actual != expected)
    throw std::invalid_argument(std::string(func) + ": " + what + " has " + std::to_string(actual) +
                                " elements, expected " + std::to_string(expected) + " (" + rule +
                                ")");
}

// row_len > 0 and `total` whole rows; with `multiple` != 0 also row_len % multiple == 0.
inline void require_rows(const char* func, std::size_t total, std::size_t row_len,
                         std::size_t multiple = 0) {
  if (row_len == 0) throw std::invalid_argument(std::string(func) + ": row_len must be > 0");
  if (multiple != 0 && row_len % multiple != 0)
    throw std::invalid_argument(std::string(func) + ": row_len " + std::to_string(row_len) +
                                " is not a multiple of " + std::to_string(multiple));
  if (total % row_len != 0)
    throw std::invalid_argument(std::string(func) + ": " + std::to_string(total) +
                                " elements are not a whole number of rows of " +
                                std::to_string(row_len));
}

}  // namespace mlacheck::quant::detail
