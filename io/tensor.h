#pragma once
// A tensor held in memory: dtype, shape and the raw little-endian bytes exactly as a safetensors
// file stores them. Bytes, not values: fp8/bf16 bit patterns (NaN payloads included) survive a
// round trip untouched, and the codecs in quant/ decide what they mean.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/dtype.h"
#include "io/error.h"

namespace mlacheck::io {

struct Tensor {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;  // outermost first; empty = 0-d (one element)
  std::vector<std::byte> bytes;

  // Product of the shape (1 for a 0-d tensor). Throws Error for a negative or overflowing shape.
  int64_t numel() const;

  // The bytes as elements of T (e.g. uint16_t for BF16, uint8_t for F8_E4M3, float for F32).
  // Throws Error if sizeof(T) != dtype_size(dtype) or the byte count is not a whole number of Ts.
  template <class T>
  std::span<const T> view() const {
    check_view(sizeof(T));
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  template <class T>
  std::span<T> view() {
    check_view(sizeof(T));
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }

  // All-zero bytes of the right size. Throws Error for a negative or overflowing shape.
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);

  // A tensor holding a copy of `values`. Throws Error if sizeof(T) != dtype_size(dtype) or
  // values.size() != numel(shape). T is the storage type: copy_of<uint16_t>(DType::BF16, ...).
  template <class T>
  static Tensor copy_of(DType dtype, std::vector<int64_t> shape, std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>, "Tensor::copy_of needs a trivially copyable T");
    Tensor t = zeros(dtype, std::move(shape));
    t.check_view(sizeof(T));
    if (values.size() != static_cast<std::size_t>(t.numel()))
      throw Error("Tensor::copy_of: " + std::to_string(values.size()) + " values for shape " +
                  t.shape_string() + " (" + std::to_string(t.numel()) + " elements)");
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }

  // "[8, 576]" — for error messages.
  std::string shape_string() const;

 private:
  void check_view(std::size_t element_size) const;
};

// "[8, 576]" for any shape; "[]" for a 0-d tensor.
std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace mlacheck::io
