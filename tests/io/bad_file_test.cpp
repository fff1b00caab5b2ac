// Every kind of malformed file is refused when it is opened, with one io::Error that names the
// file and, where the problem belongs to a tensor, the tensor. One row per kind of damage.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "tests/io/crafted_file.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::crafted_file;
using testing::le_u64;

struct BadFile {
  std::string name;                   // test name and file stem
  std::string bytes;                  // the whole file
  std::vector<std::string> mentions;  // each must appear in the message (besides the file name)
};

// {"<name>": {"dtype": "<dtype>", "shape": <shape>, "data_offsets": <offsets>}} as JSON text.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
         ", \"data_offsets\": " + offsets + "}";
}
// {<entries, comma-separated>} (built with append: GCC 12 warns falsely on "{" + s + "}").
std::string object(std::initializer_list<std::string> entries) {
  std::string s = "{";
  for (const std::string& e : entries) s.append(s.size() > 1 ? ", " : "").append(e);
  return s.append("}");
}
std::string one(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return object({entry("t", dtype, shape, offsets)});
}

std::vector<BadFile> bad_files() {
  const std::string t = "tensor 't'";
  return {
      // Too short to hold the length, and lengths that cannot be right.
      {"empty_file", "", {"too short"}},
      {"shorter_than_8_bytes", std::string("\x05\x00\x00", 3), {"3 bytes, too short"}},
      {"header_length_past_end", crafted_file("{}", 4, 1000), {"header length 1000", "past the end"}},
      {"header_length_over_limit", le_u64(100'000'001) + "{}", {"100000001", "exceeds the limit"}},
      // Exactly at the limit is allowed (as in the reference), so this one fails on the file size.
      {"header_length_at_limit", le_u64(100'000'000) + "{}", {"100000000", "past the end"}},
      {"header_length_max_u64", le_u64(UINT64_MAX), {"exceeds the limit"}},
      // Not JSON, or not a JSON object.
      {"empty_header", crafted_file("", 0), {"not valid JSON"}},
      {"invalid_json", crafted_file("{\"t\": {\"dtype\": ", 0), {"not valid JSON"}},
      {"invalid_utf8", crafted_file("{\"t\xff\": {}}", 0), {"not valid JSON"}},
      {"trailing_garbage", crafted_file("{} x", 0), {"not valid JSON"}},
      {"json_comment", crafted_file("{} // note", 0), {"not valid JSON"}},
      {"json_array", crafted_file("[]", 0), {"header is a JSON array, not an object"}},
      {"json_string", crafted_file("\"safetensors\"", 0), {"not an object"}},
      {"too_deep", crafted_file(std::string(100000, '['), 0), {"deeper"}},
      // Stricter than nlohmann's defaults, as strict as safetensors (issue 11 item 9).
      {"byte_order_mark", crafted_file("\xEF\xBB\xBF{}", 0), {"byte-order mark"}},
      {"leading_space", crafted_file(" {}", 0), {"starts with whitespace"}},
      {"nul_after_json", crafted_file(std::string("{}\0{\"x\": 1}", 11), 0), {"NUL byte at offset 2"}},
      {"nul_in_padding", crafted_file(std::string("{}  \0   ", 8), 0), {"NUL byte at offset 4"}},
      // Tensor entries with missing or ill-typed fields.
      {"entry_not_object", crafted_file("{\"t\": 5}", 0), {t, "not an object"}},
      {"missing_dtype", crafted_file("{\"t\": {\"shape\": [1], \"data_offsets\": [0, 1]}}", 1),
       {t, "missing field 'dtype'"}},
      {"missing_shape", crafted_file("{\"t\": {\"dtype\": \"U8\", \"data_offsets\": [0, 1]}}", 1),
       {t, "missing field 'shape'"}},
      {"missing_data_offsets", crafted_file("{\"t\": {\"dtype\": \"U8\", \"shape\": [1]}}", 1),
       {t, "missing field 'data_offsets'"}},
      {"dtype_not_string",
       crafted_file("{\"t\": {\"dtype\": 7, \"shape\": [1], \"data_offsets\": [0, 1]}}", 1),
       {t, "'dtype' is not a string"}},
      {"unknown_dtype_f8_e5m2", crafted_file(one("F8_E5M2", "[1]", "[0, 1]"), 1),
       {t, "unsupported dtype \"F8_E5M2\""}},
      {"unknown_dtype_bool", crafted_file(one("BOOL", "[1]", "[0, 1]"), 1), {t, "unsupported dtype"}},
      {"unknown_dtype_lowercase", crafted_file(one("u8", "[1]", "[0, 1]"), 1), {t, "unsupported"}},
      {"shape_not_array", crafted_file(one("U8", "1", "[0, 1]"), 1), {t, "'shape' is not an array"}},
      {"shape_negative", crafted_file(one("U8", "[-1]", "[0, 0]"), 0), {t, "-1 is negative"}},
      {"shape_fractional", crafted_file(one("U8", "[2.5]", "[0, 2]"), 2), {t, "not an integer"}},
      {"shape_integral_float", crafted_file(one("U8", "[2.0]", "[0, 2]"), 2), {t, "not an integer"}},
      {"shape_string", crafted_file(one("U8", "[\"2\"]", "[0, 2]"), 2), {t, "not an integer"}},
      {"shape_entry_too_large", crafted_file(one("U8", "[9223372036854775808]", "[0, 0]"), 0),
       {t, "too large"}},
      {"shape_product_overflow",
       crafted_file(one("F32", "[4294967296, 4294967296]", "[0, 0]"), 0), {t, "overflows"}},
      {"offsets_not_array", crafted_file(one("U8", "[1]", "\"0-1\""), 1), {t, "'data_offsets'"}},
      {"offsets_one_number", crafted_file(one("U8", "[1]", "[1]"), 1), {t, "two integers"}},
      {"offsets_three_numbers", crafted_file(one("U8", "[1]", "[0, 1, 1]"), 1), {t, "two integers"}},
      {"offsets_negative", crafted_file(one("U8", "[1]", "[-1, 0]"), 1), {t, "negative"}},
      {"offsets_fractional", crafted_file(one("U8", "[1]", "[0, 1.5]"), 1), {t, "not an integer"}},
      {"offsets_huge", crafted_file(one("U8", "[1]", "[18446744073709551615, 0]"), 1), {t, "too large"}},
      {"offsets_begin_after_end", crafted_file(one("U8", "[4]", "[4, 0]"), 4), {t, "end before"}},
      // Offsets that do not tile the data buffer.
      {"data_shorter_than_header_says", crafted_file(one("U8", "[8]", "[0, 8]"), 4),
       {t, "past the end of the data buffer (4 bytes)"}},
      {"overlap",
       crafted_file(object({entry("a", "U8", "[8]", "[0, 8]"), entry("b", "U8", "[8]", "[4, 12]")}), 12),
       {"tensor 'b'", "overlap tensor 'a'"}},
      {"empty_tensor_inside_another",
       crafted_file(object({entry("a", "U8", "[8]", "[0, 8]"), entry("e", "U8", "[0]", "[4, 4]")}), 8),
       {"tensor 'e'", "overlap tensor 'a'"}},
      {"hole_between",
       crafted_file(object({entry("a", "U8", "[4]", "[0, 4]"), entry("b", "U8", "[4]", "[8, 12]")}), 12),
       {"tensor 'b'", "hole of 4 bytes"}},
      {"hole_at_start", crafted_file(one("U8", "[4]", "[4, 8]"), 8), {t, "hole of 4 bytes"}},
      {"trailing_bytes", crafted_file(one("U8", "[4]", "[0, 4]"), 6),
       {"cover 4 bytes of the 6-byte data buffer", t}},
      {"data_without_tensors", crafted_file("{}", 3), {"cover 0 bytes of the 3-byte"}},
      {"size_mismatch", crafted_file(one("F32", "[3]", "[0, 8]"), 8), {t, "hold 8 bytes", "needs 12"}},
      // Duplicate keys, which a DOM parser would silently collapse.
      {"duplicate_tensor",
       crafted_file(object({entry("t", "U8", "[1]", "[0, 1]"), entry("t", "U8", "[1]", "[0, 1]")}), 1),
       {"key 't' appears twice"}},
      {"duplicate_field",
       crafted_file("{\"t\": {\"dtype\": \"U8\", \"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 1]}}", 1),
       {t, "key 'dtype' appears twice"}},
      {"duplicate_metadata_key", crafted_file("{\"__metadata__\": {\"a\": \"1\", \"a\": \"2\"}}", 0),
       {"__metadata__: key 'a' appears twice"}},
      // __metadata__ must be a map of strings.
      {"metadata_not_object", crafted_file("{\"__metadata__\": \"v1\"}", 0), {"__metadata__ is a JSON string"}},
      {"metadata_number_value", crafted_file("{\"__metadata__\": {\"seed\": 4220}}", 0),
       {"'seed'", "not a string"}},
      {"metadata_null_value", crafted_file("{\"__metadata__\": {\"seed\": null}}", 0), {"'seed'", "null"}},
      {"metadata_object_value", crafted_file("{\"__metadata__\": {\"shape\": {}}}", 0), {"'shape'", "not a string"}},
  };
}

class IoBadFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(IoBadFile, IsRefusedWithOneClearError) {
  const BadFile& bad = GetParam();
  testing::ScratchDir dir;
  const auto path = dir / (bad.name + ".safetensors");
  testing::write_file(path, bad.bytes);
  try {
    SafetensorsReader reader(path);
    FAIL() << bad.name << " was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << "message does not start with the file: " << msg;
    for (const std::string& m : bad.mentions)
      EXPECT_NE(msg.find(m), std::string::npos) << "message lacks \"" << m << "\": " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, IoBadFile, ::testing::ValuesIn(bad_files()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace mlacheck::io
