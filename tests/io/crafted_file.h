#pragma once
// Hand-made safetensors bytes, for files our writer would never produce.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlacheck::io::testing {

// 8-byte little-endian length + `header` + `data_size` bytes of data (0x5A filler). The length
// field is header.size() unless `length` overrides it.
std::string crafted_file(std::string_view header, std::size_t data_size,
                         std::optional<uint64_t> length = {});

// The length field alone, as 8 little-endian bytes.
std::string le_u64(uint64_t v);

}  // namespace mlacheck::io::testing
