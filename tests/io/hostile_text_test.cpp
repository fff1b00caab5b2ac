// Issue 11, items 5 and 9: small text inputs are regular files of bounded size, messages quoting
// a file are printable and capped, and the writer never makes a header its reader refuses. Each
// test failed before its fix (FIFO: open blocked; /dev/zero: read until memory ran out; NUL: the
// message ended at it; 101 MB header: written).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "io/error.h"
#include "io/manifest.h"
#include "io/printable.h"
#include "io/safetensors.h"
#include "io/text_file.h"
#include "tests/io/error_of.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::error_of;
using testing::ScratchDir;

#define EXPECT_MENTIONS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

TEST(IoTextFile, ReadsARegularFileWhole) {
  ScratchDir dir;
  testing::write_file(dir / "a.txt", std::string("x=1\0y", 5));
  EXPECT_EQ(read_text_file(dir / "a.txt", "case list"), std::string("x=1\0y", 5));
}

TEST(IoTextFile, RefusesAFifoWithoutBlocking) {
  ScratchDir dir;
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Before: open(O_RDONLY) waited for a writer forever, so this test would hang (CTest timeout).
  EXPECT_MENTIONS(error_of([&] { read_text_file(fifo, "case list"); }), "not a regular file");
}

TEST(IoTextFile, RefusesDevicesAndDirectories) {
  EXPECT_MENTIONS(error_of([] { read_text_file("/dev/zero", "manifest"); }), "manifest /dev/zero: not a regular file");
  ScratchDir dir;
  EXPECT_MENTIONS(error_of([&] { read_text_file(dir.path(), "case list"); }), "not a regular file");
  EXPECT_MENTIONS(error_of([&] { read_text_file(dir / "missing", "case list"); }), "No such file");
}

TEST(IoTextFile, RefusesAFileOverTheLimit) {
  ScratchDir dir;
  testing::write_file(dir / "big.txt", std::string(1001, '#'));
  EXPECT_MENTIONS(error_of([&] { read_text_file(dir / "big.txt", "case list", 1000); }),
                  "1001 bytes, more than the 1000 bytes a case list may have");
  EXPECT_EQ(read_text_file(dir / "big.txt", "case list", 1001).size(), 1001u);  // at the limit: fine
}

TEST(IoPrintable, EscapesControlBytesAndKeepsWhatFollowsANul) {
  EXPECT_EQ(printable(std::string("a\0b\x1b[31m\x7f\tc\n", 12)), "a\\x00b\\x1b[31m\\x7f\\x09c\\x0a");
  EXPECT_EQ(printable("line 1\n\tline 2", {.keep_newlines = true}), "line 1\n\tline 2");
  EXPECT_EQ(printable("größe"), "größe") << "UTF-8 text is left alone";
}

TEST(IoPrintable, ElidesTheMiddleOfALongText) {
  const std::string long_text = std::string(1000, 'a') + std::string(1000, 'b');
  const std::string p = printable(long_text, {.max_chars = 30});
  EXPECT_EQ(p, std::string(20, 'a') + " [... 1970 bytes left out ...] " + std::string(10, 'b'));
}

TEST(IoError, MessagesArePrintableAndCapped) {
  const Error e(std::string("file: key '\0\x1b' ", 15) + std::string(10'000'000, 'k'));
  const std::string msg = e.what();
  EXPECT_LE(msg.size(), kMaxMessageChars + 64);
  EXPECT_MENTIONS(msg, "key '\\x00\\x1b'");
  EXPECT_MENTIONS(msg, "bytes left out");
}

TEST(IoManifest, AManifestWithNoCaseIsAnError) {
  EXPECT_MENTIONS(error_of([] {
                    parse_manifest(R"({"schema": "mlacheck-manifest/1", "hash": "xxh3-64", "cases": []})", "m.json");
                  }),
                  "m.json: the manifest has no case");
  EXPECT_MENTIONS(error_of([] { read_manifest("/dev/zero"); }), "not a regular file");
}

TEST(IoWriterHeader, NeverWritesAHeaderTheReaderRefuses) {
  ScratchDir dir;
  SafetensorsWriter w;
  w.set_metadata("big", std::string(100'000'001, 'm'));
  w.add("t", Tensor::zeros(DType::F32, {4}));
  EXPECT_MENTIONS(error_of([&] { w.write(dir / "out.safetensors"); }), "more than the 100000000 a reader accepts");
  EXPECT_EQ(testing::list_dir(dir.path()), "") << "nothing was created";
}

}  // namespace
}  // namespace mlacheck::io
