#pragma once
// Overflow-checked byte counts of a shape, shared by Tensor, the header parser and the writer so
// that all three accept and refuse exactly the same shapes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace mlacheck::io::detail {

// Largest byte count we accept: byte sizes travel as int64 (shapes) and uint64 (offsets) and must
// fit a std::size_t for allocation.
inline constexpr uint64_t kMaxBytes = static_cast<uint64_t>(INT64_MAX);

// numel * element_size, or nullopt when an extent is negative or when the product of the
// non-zero extents times element_size exceeds kMaxBytes. Zero extents do not excuse an overflow
// elsewhere: with this rule every partial product of the shape fits an int64, so numel() can
// multiply left to right without overflow. An empty shape is a 0-d tensor: one element.
inline std::optional<uint64_t> checked_byte_size(std::span<const int64_t> shape,
                                                 std::size_t element_size) {
  uint64_t nonzero_bytes = element_size;
  bool has_zero = false;
  for (const int64_t extent : shape) {
    if (extent < 0) return std::nullopt;
    if (extent == 0) {
      has_zero = true;
      continue;
    }
    if (nonzero_bytes > kMaxBytes / static_cast<uint64_t>(extent)) return std::nullopt;
    nonzero_bytes *= static_cast<uint64_t>(extent);
  }
  if (nonzero_bytes > kMaxBytes) return std::nullopt;
  return has_zero ? 0 : nonzero_bytes;
}

}  // namespace mlacheck::io::detail
