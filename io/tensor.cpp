#include "io/tensor.h"

#include "io/detail/checked_size.h"

namespace mlacheck::io {

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string Tensor::shape_string() const { return shape_to_string(shape); }

int64_t Tensor::numel() const {
  // Checked first so that the product below cannot overflow (see checked_byte_size).
  if (!detail::checked_byte_size(shape, 1))
    throw Error("Tensor: shape " + shape_string() + " is negative or overflows");
  int64_t n = 1;
  for (const int64_t extent : shape) n *= extent;
  return n;
}

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  const auto bytes = detail::checked_byte_size(shape, dtype_size(dtype));
  if (!bytes)
    throw Error("Tensor::zeros: shape " + shape_to_string(shape) + " of " +
                std::string(dtype_name(dtype)) + " is negative or overflows");
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(static_cast<std::size_t>(*bytes), std::byte{0});
  return t;
}

void Tensor::check_view(std::size_t element_size) const {
  const std::size_t expected = dtype_size(dtype);
  if (element_size != expected)
    throw Error("Tensor::view: element of " + std::to_string(element_size) + " bytes for dtype " +
                std::string(dtype_name(dtype)) + " (" + std::to_string(expected) + " bytes)");
  if (bytes.size() % element_size != 0)
    throw Error("Tensor::view: " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                std::string(dtype_name(dtype)) + " elements");
}

}  // namespace mlacheck::io
