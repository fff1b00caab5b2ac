// SafetensorsWriter: bad tensors are refused at add(), and a failed write leaves no file behind
// (and never damages a file that was already at the path).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "io/safetensors.h"
#include "tests/io/error_of.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::list_dir;
using testing::ScratchDir;

using testing::error_of;

#define EXPECT_MENTIONS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

TEST(IoWriterAdd, RefusesDuplicateEmptyReservedAndNonUtf8Names) {
  SafetensorsWriter w;
  w.add("q", Tensor::zeros(DType::U8, {1}));
  EXPECT_MENTIONS(error_of([&] { w.add("q", Tensor::zeros(DType::U8, {1})); }), "tensor 'q': added twice");
  EXPECT_MENTIONS(error_of([&] { w.add("", Tensor::zeros(DType::U8, {1})); }), "name is empty");
  EXPECT_MENTIONS(error_of([&] { w.add("__metadata__", Tensor::zeros(DType::U8, {1})); }), "reserved");
  EXPECT_MENTIONS(error_of([&] { w.add("bad\xff", Tensor::zeros(DType::U8, {1})); }), "UTF-8");
  EXPECT_MENTIONS(error_of([&] { w.set_metadata("k", "bad\xc3"); }), "UTF-8");
}

TEST(IoWriterAdd, RefusesBytesThatDoNotMatchTheShape) {
  SafetensorsWriter w;
  Tensor t = Tensor::zeros(DType::F32, {2, 3});
  t.bytes.pop_back();
  const std::string msg = error_of([&] { w.add("k", t); });
  EXPECT_MENTIONS(msg, "tensor 'k'");
  EXPECT_MENTIONS(msg, "has 23 bytes");
  EXPECT_MENTIONS(msg, "needs 24");
}

TEST(IoWriterAdd, RefusesANegativeShape) {
  SafetensorsWriter w;
  Tensor t;
  t.dtype = DType::F32;
  t.shape = {-1};
  EXPECT_MENTIONS(error_of([&] { w.add("k", t); }), "negative or overflows");
}

SafetensorsWriter small_writer() {
  SafetensorsWriter w;
  w.add("t", Tensor::zeros(DType::F32, {16}));
  return w;
}

TEST(IoWriterFailure, MissingDirectoryLeavesNothing) {
  ScratchDir dir;
  const auto path = dir / "no_such_dir" / "out.safetensors";
  EXPECT_MENTIONS(error_of([&] { small_writer().write(path); }), "out.safetensors.tmp.XXXXXX: create failed");
  EXPECT_EQ(list_dir(dir.path()), "");
}

TEST(IoWriterFailure, ParentIsAFileLeavesNothing) {
  ScratchDir dir;
  testing::write_file(dir / "plain", "x");
  EXPECT_MENTIONS(error_of([&] { small_writer().write(dir / "plain" / "out.safetensors"); }), "create failed");
  EXPECT_EQ(list_dir(dir.path()), "plain");
}

TEST(IoWriterFailure, UnwritableDirectoryLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions do not stop root";
  ScratchDir dir;
  std::filesystem::create_directory(dir / "ro");
  std::filesystem::permissions(dir / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  EXPECT_MENTIONS(error_of([&] { small_writer().write(dir / "ro" / "out.safetensors"); }), "Permission denied");
  EXPECT_EQ(list_dir(dir / "ro"), "");
}

// /proc refuses new files even to root, so this variant runs where the one above is skipped.
TEST(IoWriterFailure, DirectoryRefusingNewFilesLeavesNothing) {
  const std::filesystem::path proc = "/proc";
  if (!std::filesystem::is_directory(proc / "self")) GTEST_SKIP() << "no /proc on this system";
  const auto path = proc / ("mlacheck_io_test_" + std::to_string(::getpid()) + ".safetensors");
  EXPECT_MENTIONS(error_of([&] { small_writer().write(path); }), "create failed");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

// The data is written, then the rename fails: the finished .tmp must be removed too.
TEST(IoWriterFailure, FailedRenameRemovesTheTemporaryFile) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "out.safetensors" / "occupied");
  EXPECT_MENTIONS(error_of([&] { small_writer().write(dir / "out.safetensors"); }), "renaming");
  EXPECT_EQ(list_dir(dir.path()), "out.safetensors");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "out.safetensors" / "occupied"));
}

TEST(IoWriterFailure, FailedWriteKeepsThePreviousFile) {
  ScratchDir dir;
  const auto path = dir / "keep.safetensors";
  small_writer().write(path);
  // A second write that fails (its target's name is a non-empty directory, so the rename fails)
  // changes no other file and leaves no temporary behind.
  const auto other_path = dir / "other.safetensors";
  std::filesystem::create_directories(other_path / "occupied");
  SafetensorsWriter other;
  other.add("other", Tensor::zeros(DType::U8, {3}));
  EXPECT_THROW(other.write(other_path), Error);
  EXPECT_EQ(SafetensorsReader(path).names(), std::vector<std::string>{"t"});
  EXPECT_EQ(list_dir(dir.path()), "keep.safetensors other.safetensors");  // no temporary left
}

// Before: every writer used the fixed name OUT.tmp with O_TRUNC, so a link planted there made
// mlacheck overwrite the link's target. The temporary now has a unique name, created O_EXCL.
TEST(IoWriterFailure, ALinkAtTheOldTemporaryNameIsNotFollowed) {
  ScratchDir dir;
  const auto victim = dir / "victim.txt";
  { std::ofstream(victim) << "do not touch"; }
  std::filesystem::create_symlink(victim, dir / "out.safetensors.tmp");
  small_writer().write(dir / "out.safetensors");
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "do not touch");
  EXPECT_EQ(SafetensorsReader(dir / "out.safetensors").names(), std::vector<std::string>{"t"});
}

// Two writers of one target: each has its own temporary, both succeed, and the file is one of the
// two, whole (before, both could exit 0 with the other's half-written data).
TEST(IoWriterFailure, ConcurrentWritersLeaveOneWholeFile) {
  ScratchDir dir;
  const auto path = dir / "shared.safetensors";
  SafetensorsWriter a, b;
  a.add("a", Tensor::zeros(DType::U8, {1 << 20}));
  b.add("b", Tensor::zeros(DType::U8, {1 << 20}));
  std::thread ta([&] { for (int i = 0; i < 5; ++i) a.write(path); });
  std::thread tb([&] { for (int i = 0; i < 5; ++i) b.write(path); });
  ta.join();
  tb.join();
  const std::vector<std::string> names = SafetensorsReader(path).names();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(names[0] == "a" || names[0] == "b");
  EXPECT_EQ(list_dir(dir.path()), "shared.safetensors");
}

}  // namespace
}  // namespace mlacheck::io
