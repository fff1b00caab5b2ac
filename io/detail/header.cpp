#include "io/detail/header.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <tuple>

#include "io/detail/checked_size.h"
#include "io/detail/header_sax_check.h"

namespace mlacheck::io::detail {
namespace {

using json = nlohmann::json;

std::string supported_dtype_list() {
  std::string s;
  for (const DType d : kAllDTypes) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return s;
}

// Builds "<file>: tensor '<name>': <problem>" errors for one header entry.
class EntryErrors {
 public:
  EntryErrors(const std::string& file, const std::string& name) : file_(file), name_(name) {}
  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(file_ + ": tensor '" + name_ + "': " + problem);
  }

 private:
  const std::string& file_;
  const std::string& name_;
};

const json& field(const json& entry, const char* key, const EntryErrors& errors) {
  const auto it = entry.find(key);
  if (it == entry.end()) errors.fail(std::string("missing field '") + key + "'");
  return *it;
}

// A JSON integer >= 0 that fits `max`; floats (2.0 included), negatives and huge values are errors.
uint64_t non_negative_integer(const json& value, const std::string& what, uint64_t max,
                              const EntryErrors& errors) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > max) errors.fail(what + " " + value.dump() + " is too large");
    return v;
  }
  if (value.is_number_integer()) {  // nlohmann stores only negative integers (and -0) as signed
    const auto v = value.get<int64_t>();
    if (v < 0) errors.fail(what + " " + value.dump() + " is negative");
    return static_cast<uint64_t>(v);
  }
  errors.fail(what + " " + value.dump() + " is not an integer");
}

TensorInfo parse_entry(const json& entry, const EntryErrors& errors) {
  if (!entry.is_object())
    errors.fail(std::string("entry is a JSON ") + entry.type_name() + ", not an object");
  TensorInfo info;

  const json& dtype = field(entry, "dtype", errors);
  if (!dtype.is_string()) errors.fail("field 'dtype' is not a string: " + dtype.dump());
  const auto parsed = dtype_from_name(dtype.get_ref<const std::string&>());
  if (!parsed)
    errors.fail("unsupported dtype " + dtype.dump() + " (supported: " + supported_dtype_list() + ")");
  info.dtype = *parsed;

  const json& shape = field(entry, "shape", errors);
  if (!shape.is_array()) errors.fail("field 'shape' is not an array: " + shape.dump());
  for (const json& extent : shape)
    info.shape.push_back(static_cast<int64_t>(
        non_negative_integer(extent, "shape entry", static_cast<uint64_t>(INT64_MAX), errors)));

  const json& offsets = field(entry, "data_offsets", errors);
  if (!offsets.is_array() || offsets.size() != 2)
    errors.fail("field 'data_offsets' is not an array of two integers: " + offsets.dump());
  info.begin = non_negative_integer(offsets[0], "data_offsets begin", kMaxBytes, errors);
  info.end = non_negative_integer(offsets[1], "data_offsets end", kMaxBytes, errors);
  if (info.begin > info.end) errors.fail("data_offsets " + offsets.dump() + " end before they begin");

  const auto bytes = checked_byte_size(info.shape, dtype_size(info.dtype));
  if (!bytes)
    errors.fail("shape " + shape_to_string(info.shape) + " of " + dtype.get<std::string>() +
                " overflows");
  if (info.end - info.begin != *bytes)
    errors.fail("data_offsets " + offsets.dump() + " hold " + std::to_string(info.end - info.begin) +
                " bytes, but shape " + shape_to_string(info.shape) + " of " +
                dtype.get<std::string>() + " needs " + std::to_string(*bytes));
  return info;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& file) {
  if (!value.is_object())
    throw Error(file + ": __metadata__ is a JSON " + value.type_name() + ", not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string())
      throw Error(file + ": __metadata__ value of '" + key + "' is a JSON " + item.type_name() +
                  ", not a string: " + item.dump());
    metadata.emplace(key, item.get<std::string>());
  }
  return metadata;
}

// Tensors sorted by offset must tile [0, data_size) exactly.
void check_layout(const ParsedHeader& header, uint64_t data_size, const std::string& file) {
  uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (const std::string& name : header.order) {
    const TensorInfo& info = header.tensors.find(name)->second;
    const EntryErrors errors(file, name);
    const std::string range =
        "data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) + "]";
    if (info.end > data_size)
      errors.fail(range + " run past the end of the data buffer (" + std::to_string(data_size) +
                  " bytes): file truncated?");
    if (info.begin < covered)
      errors.fail(range + " overlap tensor '" + *previous + "', which ends at " +
                  std::to_string(covered));
    if (info.begin > covered)
      errors.fail(range + " leave a hole of " + std::to_string(info.begin - covered) +
                  " bytes before this tensor (data before it ends at " + std::to_string(covered) +
                  ")");
    covered = info.end;
    previous = &name;
  }
  if (covered != data_size)
    throw Error(file + ": the tensors cover " + std::to_string(covered) + " bytes of the " +
                std::to_string(data_size) + "-byte data buffer" +
                (previous ? " (trailing bytes after tensor '" + *previous + "')" : std::string()));
}

}  // namespace

ParsedHeader parse_header(std::string_view json_text, uint64_t data_size, const std::string& file) {
  // As strict as safetensors' own parser, which requires '{' as the first byte
  // (InvalidHeaderStart): nlohmann would skip a byte-order mark or leading whitespace, and stop at
  // a NUL, accepting whatever follows it. Other first bytes fail the JSON checks below.
  if (json_text.starts_with("\xEF\xBB\xBF"))
    throw Error(file + ": header starts with a UTF-8 byte-order mark; safetensors requires '{' first");
  if (!json_text.empty() && (json_text[0] == ' ' || json_text[0] == '\t' || json_text[0] == '\n' ||
                             json_text[0] == '\r'))
    throw Error(file + ": header starts with whitespace; safetensors requires '{' first");
  if (const std::size_t nul = json_text.find('\0'); nul != std::string_view::npos)
    throw Error(file + ": header has a NUL byte at offset " + std::to_string(nul));
  if (const std::string problem = check_header_json(json_text); !problem.empty())
    throw Error(file + ": " + problem);
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& ex) {  // the check above should have caught it; never crash
    throw Error(file + ": header is not valid JSON: " + ex.what());
  }
  if (!root.is_object())
    throw Error(file + ": header is a JSON " + std::string(root.type_name()) + ", not an object");

  ParsedHeader header;
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      header.metadata = parse_metadata(entry, file);
      continue;
    }
    header.tensors.emplace(name, parse_entry(entry, EntryErrors(file, name)));
    header.order.push_back(name);
  }
  std::sort(header.order.begin(), header.order.end(),
            [&](const std::string& a, const std::string& b) {
              const TensorInfo& x = header.tensors.find(a)->second;
              const TensorInfo& y = header.tensors.find(b)->second;
              return std::tie(x.begin, x.end, a) < std::tie(y.begin, y.end, b);
            });
  check_layout(header, data_size, file);
  return header;
}

}  // namespace mlacheck::io::detail
