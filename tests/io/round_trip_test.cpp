// What the writer writes, the reader gives back bit for bit: every dtype, empty and 0-d tensors,
// metadata, and the layout promises (header padded to 8 bytes, tensors aligned to their size).
#include <gtest/gtest.h>

#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::ScratchDir;

// Bytes that differ per position and per dtype, so a swapped or shifted tensor shows.
Tensor patterned(DType dtype, std::vector<int64_t> shape, unsigned salt) {
  Tensor t = Tensor::zeros(dtype, std::move(shape));
  for (std::size_t i = 0; i < t.bytes.size(); ++i)
    t.bytes[i] = static_cast<std::byte>((i * 37 + salt * 11 + 1) & 0xFF);
  return t;
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& name) {
  EXPECT_EQ(got.dtype, want.dtype) << name;
  EXPECT_EQ(got.shape, want.shape) << name;
  EXPECT_TRUE(got.bytes == want.bytes) << name << ": bytes differ";
}

// add_view writes the caller's bytes without a copy: same file as add() with a copy, and the
// same size checks.
TEST(IoRoundTrip, ViewAndCopyWriteTheSameFile) {
  ScratchDir dir;
  const Tensor big = patterned(DType::BF16, {7, 9}, 3);
  const Tensor small = patterned(DType::U8, {5}, 4);
  SafetensorsWriter copied, viewed;
  copied.add("big", big);
  copied.add("small", small);
  viewed.add_view("big", big.dtype, big.shape, big.bytes);
  viewed.add("small", small);
  copied.write(dir / "copied.safetensors");
  viewed.write(dir / "viewed.safetensors");
  EXPECT_EQ(testing::read_file(dir / "copied.safetensors"), testing::read_file(dir / "viewed.safetensors"));
  expect_same(SafetensorsReader(dir / "viewed.safetensors").read("big"), big, "big");
  EXPECT_THROW(viewed.add_view("short", DType::F32, {4}, std::span(big.bytes).first(15)), Error);
  EXPECT_THROW(viewed.add_view("big", big.dtype, big.shape, big.bytes), Error);
}

class IoRoundTripDType : public ::testing::TestWithParam<DType> {};

TEST_P(IoRoundTripDType, TensorComesBackBitExact) {
  ScratchDir dir;
  const Tensor t = patterned(GetParam(), {3, 5}, 1);
  SafetensorsWriter writer;
  writer.add("t", t);
  writer.write(dir / "one.safetensors");

  const SafetensorsReader reader(dir / "one.safetensors");
  ASSERT_EQ(reader.names(), std::vector<std::string>{"t"});
  EXPECT_EQ(reader.info("t").dtype, GetParam());
  expect_same(reader.read("t"), t, "t");
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, IoRoundTripDType, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

TEST(IoRoundTrip, MixedFileKeepsEveryTensorAndAlignsThem) {
  ScratchDir dir;
  SafetensorsWriter writer;
  std::vector<std::pair<std::string, Tensor>> added;
  unsigned salt = 0;
  // Odd sizes first, so that insertion-order layout would misalign the wider types.
  for (const DType d : {DType::U8, DType::BF16, DType::F8_E4M3, DType::F64, DType::I32,
                        DType::F16, DType::I64, DType::F32, DType::F8_E8M0}) {
    added.emplace_back("x_" + std::string(dtype_name(d)), patterned(d, {3}, ++salt));
    writer.add(added.back().first, added.back().second);
  }
  writer.write(dir / "mixed.safetensors");

  const SafetensorsReader reader(dir / "mixed.safetensors");
  ASSERT_EQ(reader.names().size(), added.size());
  for (const auto& [name, tensor] : added) {
    expect_same(reader.read(name), tensor, name);
    EXPECT_EQ(reader.info(name).begin % dtype_size(tensor.dtype), 0u) << name << " is misaligned";
  }
  // names() follows the data offsets.
  uint64_t previous_end = 0;
  for (const std::string& name : reader.names()) {
    EXPECT_EQ(reader.info(name).begin, previous_end) << name;
    previous_end = reader.info(name).end;
  }
}

TEST(IoRoundTrip, HeaderIsPaddedToAMultipleOfEight) {
  ScratchDir dir;
  for (int name_length = 1; name_length <= 9; ++name_length) {  // every header length mod 8
    SafetensorsWriter writer;
    writer.add(std::string(static_cast<std::size_t>(name_length), 'n'), patterned(DType::U8, {1}, 0));
    writer.write(dir / "pad.safetensors");
    std::ifstream in(dir / "pad.safetensors", std::ios::binary);
    unsigned char length[8] = {};
    in.read(reinterpret_cast<char*>(length), 8);
    EXPECT_EQ(length[0] % 8, 0) << "name length " << name_length;
    EXPECT_NO_THROW(SafetensorsReader(dir / "pad.safetensors"));
  }
}

TEST(IoRoundTrip, EmptyAndZeroDimTensors) {
  ScratchDir dir;
  SafetensorsWriter writer;
  const Tensor empty1 = Tensor::zeros(DType::F32, {0});
  const Tensor empty2 = Tensor::zeros(DType::BF16, {2, 0});
  const Tensor scalar = patterned(DType::F64, {}, 3);
  writer.add("empty1", empty1);
  writer.add("empty2", empty2);
  writer.add("scalar", scalar);
  writer.write(dir / "edge.safetensors");

  const SafetensorsReader reader(dir / "edge.safetensors");
  expect_same(reader.read("empty1"), empty1, "empty1");
  expect_same(reader.read("empty2"), empty2, "empty2");
  expect_same(reader.read("scalar"), scalar, "scalar");
  EXPECT_EQ(reader.read("scalar").bytes.size(), 8u);
  EXPECT_TRUE(reader.info("scalar").shape.empty());
}

TEST(IoRoundTrip, OnlyEmptyTensorsAndNoTensorsAtAll) {
  ScratchDir dir;
  SafetensorsWriter only_empty;
  only_empty.add("a", Tensor::zeros(DType::I32, {0, 4}));
  only_empty.write(dir / "only_empty.safetensors");
  EXPECT_EQ(SafetensorsReader(dir / "only_empty.safetensors").info("a").end, 0u);

  SafetensorsWriter nothing;
  nothing.write(dir / "nothing.safetensors");
  const SafetensorsReader reader(dir / "nothing.safetensors");
  EXPECT_TRUE(reader.names().empty());
  EXPECT_TRUE(reader.metadata().empty());
}

TEST(IoRoundTrip, MetadataComesBack) {
  ScratchDir dir;
  SafetensorsWriter writer;
  writer.set_metadata("schema", "mlacheck-golden v1");
  writer.set_metadata("seed", "4220");
  writer.set_metadata("seed", "4221");  // a later value replaces the earlier one
  writer.set_metadata("note", "quotes \" backslash \\ newline \n unicode \xC3\xA9");
  writer.set_metadata("", "");
  writer.add("t", patterned(DType::U8, {2}, 0));
  writer.write(dir / "meta.safetensors");

  const std::map<std::string, std::string> expected{
      {"schema", "mlacheck-golden v1"},
      {"seed", "4221"},
      {"note", "quotes \" backslash \\ newline \n unicode \xC3\xA9"},
      {"", ""}};
  EXPECT_EQ(SafetensorsReader(dir / "meta.safetensors").metadata(), expected);
}

TEST(IoRoundTrip, RewritingReplacesTheOldFile) {
  ScratchDir dir;
  SafetensorsWriter first;
  first.add("old", patterned(DType::U8, {100}, 0));
  first.write(dir / "f.safetensors");
  SafetensorsWriter second;
  second.add("new", patterned(DType::U8, {3}, 1));
  second.write(dir / "f.safetensors");

  const SafetensorsReader reader(dir / "f.safetensors");
  EXPECT_EQ(reader.names(), std::vector<std::string>{"new"});
  EXPECT_EQ(testing::list_dir(dir.path()), "f.safetensors");  // no .tmp left behind
}

TEST(IoRoundTrip, CopiesOfAReaderShareTheOpenFile) {
  ScratchDir dir;
  SafetensorsWriter writer;
  const Tensor t = patterned(DType::I64, {4}, 2);
  writer.add("t", t);
  writer.write(dir / "c.safetensors");
  std::optional<SafetensorsReader> original(std::in_place, dir / "c.safetensors");
  const SafetensorsReader copy = *original;
  original.reset();
  expect_same(copy.read("t"), t, "t");
}

}  // namespace
}  // namespace mlacheck::io
