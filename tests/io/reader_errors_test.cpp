// Reader errors that are not about a malformed header: missing files and tensors, wrong dtype or
// rank for read_checked, and a file that changes under an open reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/safetensors.h"
#include "tests/io/error_of.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::ScratchDir;

using testing::error_of;

void expect_mentions(const std::string& msg, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "lacks \"" << p << "\": " << msg;
}

std::filesystem::path small_file(const ScratchDir& dir) {
  SafetensorsWriter writer;
  writer.add("q", Tensor::zeros(DType::F32, {2, 3}));
  writer.add("big", Tensor::zeros(DType::U8, {4096}));
  const auto path = dir / "small.safetensors";
  writer.write(path);
  return path;
}

TEST(IoReaderErrors, MissingFile) {
  ScratchDir dir;
  const auto path = dir / "absent.safetensors";
  expect_mentions(error_of([&] { SafetensorsReader r(path); }), {path.string(), "open", "No such file"});
}

TEST(IoReaderErrors, DirectoryInsteadOfFile) {
  ScratchDir dir;
  expect_mentions(error_of([&] { SafetensorsReader r(dir.path()); }), {dir.path().string(), "not a regular file"});
}

TEST(IoReaderErrors, AbsentTensorNamesFileAndTensor) {
  ScratchDir dir;
  const SafetensorsReader reader(small_file(dir));
  EXPECT_FALSE(reader.contains("k"));
  EXPECT_TRUE(reader.contains("q"));
  expect_mentions(error_of([&] { (void)reader.info("k"); }), {"small.safetensors", "tensor 'k' not found"});
  expect_mentions(error_of([&] { (void)reader.read("k"); }), {"small.safetensors", "tensor 'k' not found"});
}

TEST(IoReaderErrors, ReadCheckedWrongDtype) {
  ScratchDir dir;
  const auto path = small_file(dir);
  const SafetensorsReader reader(path);
  EXPECT_EQ(error_of([&] { (void)read_checked(reader, "q", DType::BF16); }),
            path.string() + ": tensor 'q' has dtype F32, expected BF16");
}

TEST(IoReaderErrors, ReadCheckedWrongRank) {
  ScratchDir dir;
  const SafetensorsReader reader(small_file(dir));
  expect_mentions(error_of([&] { (void)read_checked(reader, "q", DType::F32, 3); }),
                  {"small.safetensors", "tensor 'q' has rank 2", "[2, 3]", "expected rank 3"});
}

TEST(IoReaderErrors, ReadCheckedAcceptsTheRightDtypeAndRank) {
  ScratchDir dir;
  const SafetensorsReader reader(small_file(dir));
  EXPECT_EQ(read_checked(reader, "q", DType::F32, 2).numel(), 6);
  EXPECT_EQ(read_checked(reader, "q", DType::F32).numel(), 6);
}

TEST(IoReaderErrors, FileTruncatedAfterOpen) {
  ScratchDir dir;
  const auto path = small_file(dir);
  const SafetensorsReader reader(path);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);  // cuts into "big"
  expect_mentions(error_of([&] { (void)reader.read("big"); }), {"small.safetensors", "tensor 'big'", "file ended"});
}

}  // namespace
}  // namespace mlacheck::io
