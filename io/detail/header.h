#pragma once
// Parsing and validating the JSON header of a safetensors file, independent of file I/O: the
// reader hands it the header text and the size of the data buffer that follows it.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "io/safetensors.h"

namespace mlacheck::io::detail {

// The reference implementation's limit (safetensors MAX_HEADER_SIZE): refusing larger headers
// keeps a corrupt length from making us allocate gigabytes.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct ParsedHeader {
  std::map<std::string, std::string> metadata;
  std::map<std::string, TensorInfo, std::less<>> tensors;
  std::vector<std::string> order;  // by (begin, end, name)
};

// Throws Error("<file>: ...") for anything but a valid header whose tensors cover exactly
// `data_size` bytes. `file` only labels messages.
ParsedHeader parse_header(std::string_view json_text, uint64_t data_size, const std::string& file);

}  // namespace mlacheck::io::detail
