#include <array>
#include <string>

#include "io/detail/checked_size.h"
#include "io/detail/header.h"
#include "io/detail/posix_file.h"
#include "io/safetensors.h"

namespace mlacheck::io {
namespace {

uint64_t load_le_u64(const std::array<std::byte, 8>& b) {
  uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
  return v;
}

}  // namespace

SafetensorsReader::SafetensorsReader(std::filesystem::path path)
    : path_(std::move(path)), file_(std::make_shared<const detail::ReadOnlyFile>(path_)) {
  const std::string file = path_.string();
  const uint64_t size = file_->size();
  if (size < 8)
    throw Error(file + ": file is " + std::to_string(size) +
                " bytes, too short for the 8-byte header length");
  std::array<std::byte, 8> length_bytes{};
  file_->read_exact(0, length_bytes, "header length");
  const uint64_t header_length = load_le_u64(length_bytes);
  if (header_length > detail::kMaxHeaderBytes)
    throw Error(file + ": header length " + std::to_string(header_length) + " exceeds the limit of " +
                std::to_string(detail::kMaxHeaderBytes) + " bytes (corrupt or not a safetensors file)");
  if (header_length > size - 8)
    throw Error(file + ": header length " + std::to_string(header_length) +
                " runs past the end of the file (" + std::to_string(size) + " bytes)");

  std::string text(static_cast<std::size_t>(header_length), '\0');
  file_->read_exact(8, std::as_writable_bytes(std::span(text)), "header");
  detail::ParsedHeader header = detail::parse_header(text, size - 8 - header_length, file);
  metadata_ = std::move(header.metadata);
  tensors_ = std::move(header.tensors);
  order_ = std::move(header.order);
  data_start_ = 8 + header_length;
}

std::vector<std::string> SafetensorsReader::names() const { return order_; }

bool SafetensorsReader::contains(std::string_view name) const {
  return tensors_.find(name) != tensors_.end();
}

const TensorInfo& SafetensorsReader::info(std::string_view name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw Error(path_.string() + ": tensor '" + std::string(name) + "' not found (the file has " +
                std::to_string(tensors_.size()) + " tensors)");
  return it->second;
}

void SafetensorsReader::read_bytes(std::string_view name, uint64_t begin,
                                   std::span<std::byte> out) const {
  file_->read_exact(data_start_ + begin, out, "tensor '" + std::string(name) + "'");
}

Tensor SafetensorsReader::read(std::string_view name) const {
  const TensorInfo& meta = info(name);
  Tensor tensor;
  tensor.dtype = meta.dtype;
  tensor.shape = meta.shape;
  tensor.bytes.resize(static_cast<std::size_t>(meta.end - meta.begin));
  read_bytes(name, meta.begin, tensor.bytes);
  return tensor;
}

void SafetensorsReader::read_rows(std::string_view name, int64_t first, int64_t count,
                                  std::span<std::byte> out) const {
  const TensorInfo& meta = info(name);
  const std::string where = path_.string() + ": tensor '" + std::string(name) + "': read_rows: ";
  if (meta.shape.empty()) throw Error(where + "tensor is 0-d and has no rows");
  const int64_t rows = meta.shape.front();
  // Written so that nothing overflows: first <= rows and count <= rows - first.
  if (first < 0 || count < 0 || first > rows || count > rows - first)
    throw Error(where + "rows [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                std::to_string(count) + ") are outside [0, " + std::to_string(rows) + ")");
  // One row's bytes; checked_byte_size of the inner shape cannot fail since the whole shape passed.
  const std::span<const int64_t> inner(meta.shape.data() + 1, meta.shape.size() - 1);
  const uint64_t row_bytes = *detail::checked_byte_size(inner, dtype_size(meta.dtype));
  // count <= rows, and rows * row_bytes (if rows > 0) is the checked tensor size: no overflow.
  const uint64_t want = static_cast<uint64_t>(count) * row_bytes;
  if (out.size() != want)
    throw Error(where + "output span has " + std::to_string(out.size()) + " bytes, " +
                std::to_string(count) + " rows of " + shape_to_string(meta.shape) + " " +
                std::string(dtype_name(meta.dtype)) + " need " + std::to_string(want));
  read_bytes(name, meta.begin + static_cast<uint64_t>(first) * row_bytes, out);
}

SafetensorsReader::Mapped SafetensorsReader::map(std::string_view name) const {
  const TensorInfo& meta = info(name);
  auto range = file_->map(data_start_ + meta.begin, static_cast<std::size_t>(meta.end - meta.begin),
                          "tensor '" + std::string(name) + "'");
  const std::span<const std::byte> bytes = range->bytes();
  return {bytes, std::move(range)};
}

Tensor read_checked(const SafetensorsReader& reader, std::string_view name, DType expected,
                    std::optional<std::size_t> rank) {
  const TensorInfo& meta = reader.info(name);
  const std::string where = reader.path().string() + ": tensor '" + std::string(name) + "'";
  if (meta.dtype != expected)
    throw Error(where + " has dtype " + std::string(dtype_name(meta.dtype)) + ", expected " +
                std::string(dtype_name(expected)));
  if (rank && meta.shape.size() != *rank)
    throw Error(where + " has rank " + std::to_string(meta.shape.size()) + " (shape " +
                shape_to_string(meta.shape) + "), expected rank " + std::to_string(*rank));
  return reader.read(name);
}

}  // namespace mlacheck::io
