// What the writer writes, the reader gives back bit for bit: every dtype, empty and 0-d tensors,
// metadata, and the layout promises (header padded to 8 bytes, tensors aligned to their size).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/manifest.h"
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

// add_generated makes the bytes while writing, whole rows a chunk at a time and in order: the same
// file as add_view of the whole tensor (5 MB of 1000-byte rows: two chunks, the last a short one).
TEST(IoRoundTrip, GeneratedRowsWriteTheSameFileAsAView) {
  ScratchDir dir;
  const Tensor big = patterned(DType::U8, {5000, 1000}, 5);
  const Tensor small = patterned(DType::F32, {3}, 6);
  SafetensorsWriter viewed, generated;
  viewed.add_view("big", big.dtype, big.shape, big.bytes);
  viewed.add("small", small);
  std::vector<std::pair<int64_t, int64_t>> calls;
  generated.add_generated("big", big.dtype, big.shape, [&](int64_t first, int64_t count, std::span<std::byte> out) {
    calls.emplace_back(first, count);
    ASSERT_EQ(out.size(), static_cast<std::size_t>(count) * 1000);
    std::copy_n(big.bytes.begin() + first * 1000, out.size(), out.begin());
  });
  generated.add("small", small);
  viewed.write(dir / "viewed.safetensors");
  generated.write(dir / "generated.safetensors");
  EXPECT_EQ(testing::read_file(dir / "viewed.safetensors"), testing::read_file(dir / "generated.safetensors"));
  const int64_t per_chunk = static_cast<int64_t>(kChunkBytes / 1000);
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, per_chunk}, {per_chunk, 5000 - per_chunk}}));
  EXPECT_THROW(generated.add_generated("scalar", DType::F32, {}, [](int64_t, int64_t, std::span<std::byte>) {}), Error);
  EXPECT_THROW(generated.add_generated("big", DType::U8, {1}, [](int64_t, int64_t, std::span<std::byte>) {}), Error);
}

// The manifest's hash of a tensor taken a chunk at a time (gen's derived caches) is the hash of the
// whole: pieces of uneven sizes, empty ones included, over 1 MB; and xxh3-64 of nothing is XXH3's
// published value.
TEST(IoManifestHash, StreamingEqualsOneCall) {
  EXPECT_EQ(hash_bytes({}), "2d06800538d394c2");
  EXPECT_EQ(StreamingHash().digest(), "2d06800538d394c2");
  const Tensor t = patterned(DType::U8, {1 << 20}, 7);
  StreamingHash h;
  std::size_t at = 0;
  for (std::size_t piece = 0; at < t.bytes.size(); piece = (piece * 7 + 5) % 70001) {
    const std::size_t n = std::min(piece, t.bytes.size() - at);
    h.update(std::span(t.bytes).subspan(at, n));
    at += n;
  }
  EXPECT_EQ(h.digest(), hash_bytes(t.bytes));
  EXPECT_NE(h.digest(), hash_bytes(std::span(t.bytes).first(t.bytes.size() - 1)));
}

// A producer that fails leaves no file (and no temporary) behind.
TEST(IoRoundTrip, AFailingProducerWritesNothing) {
  ScratchDir dir;
  SafetensorsWriter w;
  w.add_generated("rows", DType::U8, {3, 4}, [](int64_t, int64_t, std::span<std::byte>) {
    throw Error("no rows today");
  });
  EXPECT_THROW(w.write(dir / "x.safetensors"), Error);
  EXPECT_EQ(testing::list_dir(dir.path()), "");
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
