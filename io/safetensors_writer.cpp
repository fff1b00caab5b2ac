#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <system_error>

#include "io/detail/checked_size.h"
#include "io/detail/header.h"
#include "io/detail/posix_file.h"
#include "io/safetensors.h"

#include "io/atomic_file.h"

namespace mlacheck::io {
namespace {

using ordered_json = nlohmann::ordered_json;

// nlohmann refuses to dump invalid UTF-8; finding out at add() time names the culprit early.
bool is_valid_utf8(const std::string& s) {
  try {
    (void)ordered_json(s).dump();
    return true;
  } catch (const ordered_json::exception&) {
    return false;
  }
}

std::array<std::byte, 8> le_u64(uint64_t v) {
  std::array<std::byte, 8> b{};
  for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
  return b;
}

}  // namespace

void for_each_chunk(int64_t rows, std::size_t row_bytes, const RowProducer& produce,
                    const std::function<void(std::span<const std::byte>)>& sink) {
  const int64_t per_chunk =
      std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / std::max<std::size_t>(row_bytes, 1)));
  std::vector<std::byte> chunk;
  for (int64_t first = 0; first < rows; first += per_chunk) {
    const int64_t count = std::min(per_chunk, rows - first);
    chunk.resize(static_cast<std::size_t>(count) * row_bytes);
    produce(first, count, chunk);
    sink(chunk);
  }
}

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  if (!is_valid_utf8(key) || !is_valid_utf8(value))
    throw Error("SafetensorsWriter: __metadata__ key or value of '" + key + "' is not valid UTF-8");
  metadata_.insert_or_assign(std::move(key), std::move(value));
}

void SafetensorsWriter::check_new(const std::string& name, DType dtype,
                                  const std::vector<int64_t>& shape, std::size_t byte_count) const {
  const std::string where = "SafetensorsWriter: tensor '" + name + "': ";
  if (name.empty()) throw Error("SafetensorsWriter: tensor name is empty");
  if (name == "__metadata__") throw Error(where + "name is reserved for the metadata");
  if (!is_valid_utf8(name)) throw Error(where + "name is not valid UTF-8");
  for (const Entry& existing : tensors_)
    if (existing.name == name) throw Error(where + "added twice");
  const auto bytes = detail::checked_byte_size(shape, dtype_size(dtype));
  if (!bytes) throw Error(where + "shape " + shape_to_string(shape) + " is negative or overflows");
  if (byte_count != *bytes)
    throw Error(where + "has " + std::to_string(byte_count) + " bytes, but shape " +
                shape_to_string(shape) + " of " + std::string(dtype_name(dtype)) + " needs " +
                std::to_string(*bytes));
}

void SafetensorsWriter::add(std::string name, Tensor tensor) {
  check_new(name, tensor.dtype, tensor.shape, tensor.bytes.size());
  const std::size_t n = tensor.bytes.size();
  Entry e{std::move(name), tensor.dtype, std::move(tensor.shape), std::move(tensor.bytes), {}, {}, n};
  e.bytes = e.owned;  // the vector's buffer moves with it, so the view stays valid
  tensors_.push_back(std::move(e));
}

void SafetensorsWriter::add_view(std::string name, DType dtype, std::vector<int64_t> shape,
                                 std::span<const std::byte> bytes) {
  check_new(name, dtype, shape, bytes.size());
  tensors_.push_back(Entry{std::move(name), dtype, std::move(shape), {}, bytes, {}, bytes.size()});
}

void SafetensorsWriter::add_generated(std::string name, DType dtype, std::vector<int64_t> shape,
                                      RowProducer produce) {
  if (shape.empty())
    throw Error("SafetensorsWriter: tensor '" + name + "': a generated tensor needs rows (rank >= 1)");
  const auto bytes = detail::checked_byte_size(shape, dtype_size(dtype));
  check_new(name, dtype, shape, bytes.value_or(0));  // an overflowing shape throws here
  tensors_.push_back(
      Entry{std::move(name), dtype, std::move(shape), {}, {}, std::move(produce), *bytes});
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
  // Layout order: element size descending (keeps each tensor aligned), then add() order.
  std::vector<const Entry*> layout;
  for (const Entry& entry : tensors_) layout.push_back(&entry);
  std::stable_sort(layout.begin(), layout.end(), [](const Entry* a, const Entry* b) {
    return dtype_size(a->dtype) > dtype_size(b->dtype);
  });

  ordered_json header = ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  uint64_t offset = 0;
  for (const Entry* entry : layout) {
    const uint64_t end = offset + entry->byte_count;
    header[entry->name] = {{"dtype", dtype_name(entry->dtype)},
                           {"shape", entry->shape},
                           {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  // Pad with spaces so the data buffer starts on a multiple of 8, as the reference writer does.
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  // Never write what our own reader (and safetensors') refuses: fail before creating anything.
  if (text.size() > detail::kMaxHeaderBytes)
    throw Error(path.string() + ": the header would be " + std::to_string(text.size()) +
                " bytes, more than the " + std::to_string(detail::kMaxHeaderBytes) +
                " a reader accepts (too many tensors or too much metadata)");

  AtomicFile out(path);
  out.write(le_u64(text.size()));
  out.write(std::as_bytes(std::span(text)));
  for (const Entry* entry : layout) {
    if (!entry->produce) {
      out.write(entry->bytes);
      continue;
    }
    const int64_t rows = entry->shape[0];
    const std::size_t row_bytes = rows == 0 ? 0 : entry->byte_count / static_cast<std::size_t>(rows);
    for_each_chunk(rows, row_bytes, entry->produce,
                   [&](std::span<const std::byte> chunk) { out.write(chunk); });
  }
  out.commit();
}

}  // namespace mlacheck::io
