#include "tests/io/crafted_file.h"

namespace mlacheck::io::testing {

std::string le_u64(uint64_t v) {
  std::string b(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return b;
}

std::string crafted_file(std::string_view header, std::size_t data_size,
                         std::optional<uint64_t> length) {
  return le_u64(length.value_or(header.size())) + std::string(header) +
         std::string(data_size, '\x5A');
}

}  // namespace mlacheck::io::testing
