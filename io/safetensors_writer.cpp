#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <system_error>

#include "io/detail/checked_size.h"
#include "io/detail/posix_file.h"
#include "io/safetensors.h"

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

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  if (!is_valid_utf8(key) || !is_valid_utf8(value))
    throw Error("SafetensorsWriter: __metadata__ key or value of '" + key + "' is not valid UTF-8");
  metadata_.insert_or_assign(std::move(key), std::move(value));
}

void SafetensorsWriter::add(std::string name, Tensor tensor) {
  const std::string where = "SafetensorsWriter: tensor '" + name + "': ";
  if (name.empty()) throw Error("SafetensorsWriter: tensor name is empty");
  if (name == "__metadata__") throw Error(where + "name is reserved for the metadata");
  if (!is_valid_utf8(name)) throw Error(where + "name is not valid UTF-8");
  for (const auto& [existing, unused] : tensors_)
    if (existing == name) throw Error(where + "added twice");
  const auto bytes = detail::checked_byte_size(tensor.shape, dtype_size(tensor.dtype));
  if (!bytes) throw Error(where + "shape " + tensor.shape_string() + " is negative or overflows");
  if (tensor.bytes.size() != *bytes)
    throw Error(where + "has " + std::to_string(tensor.bytes.size()) + " bytes, but shape " +
                tensor.shape_string() + " of " + std::string(dtype_name(tensor.dtype)) + " needs " +
                std::to_string(*bytes));
  tensors_.emplace_back(std::move(name), std::move(tensor));
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
  // Layout order: element size descending (keeps each tensor aligned), then add() order.
  std::vector<const std::pair<std::string, Tensor>*> layout;
  for (const auto& entry : tensors_) layout.push_back(&entry);
  std::stable_sort(layout.begin(), layout.end(), [](const auto* a, const auto* b) {
    return dtype_size(a->second.dtype) > dtype_size(b->second.dtype);
  });

  ordered_json header = ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  uint64_t offset = 0;
  for (const auto* entry : layout) {
    const Tensor& t = entry->second;
    const uint64_t end = offset + t.bytes.size();
    header[entry->first] = {{"dtype", dtype_name(t.dtype)},
                            {"shape", t.shape},
                            {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  // Pad with spaces so the data buffer starts on a multiple of 8, as the reference writer does.
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');

  std::filesystem::path tmp = path;
  tmp += ".tmp";
  try {
    detail::WriteOnlyFile out(tmp);
    out.write_all(le_u64(text.size()));
    out.write_all(std::as_bytes(std::span(text)));
    for (const auto* entry : layout) out.write_all(entry->second.bytes);
    out.sync_and_close();
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw Error(path.string() + ": renaming " + tmp.string() + " onto it failed: " + ec.message());
  } catch (...) {
    std::error_code ignored;  // best effort: the original error is the one worth reporting
    std::filesystem::remove(tmp, ignored);
    throw;
  }
}

}  // namespace mlacheck::io
