// Offsets past 4 GiB: a 5 GiB tensor in a sparse file (no disk blocks, no 5 GiB of memory), read
// with read_rows at its end. Catches 32-bit truncation anywhere between the header and pread.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "io/safetensors.h"
#include "tests/io/crafted_file.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

TEST(IoLargeFile, ReadRowsPastFourGiB) {
  testing::ScratchDir dir;
  const auto path = dir / "large.safetensors";
  constexpr int64_t kRows = 5 * 1024 * 1024;  // rows of 1 KiB: 5 GiB in all
  constexpr int64_t kRowBytes = 1024;
  constexpr uint64_t kDataBytes = static_cast<uint64_t>(kRows * kRowBytes);
  const std::string header = "{\"big\": {\"dtype\": \"U8\", \"shape\": [" + std::to_string(kRows) +
                             ", 1024], \"data_offsets\": [0, " + std::to_string(kDataBytes) + "]}}";
  testing::write_file(path, testing::le_u64(header.size()) + header);
  std::filesystem::resize_file(path, 8 + header.size() + kDataBytes);  // sparse: holes read as 0
  {
    std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(static_cast<std::streamoff>(8 + header.size() + kDataBytes - kRowBytes));
    out.write("last row", 8);
    ASSERT_TRUE(out.good());
  }

  const SafetensorsReader reader(path);
  ASSERT_EQ(reader.info("big").end, kDataBytes);
  std::vector<std::byte> rows(2 * kRowBytes, std::byte{0xFF});
  reader.read_rows("big", kRows - 2, 2, rows);
  EXPECT_EQ(rows[0], std::byte{0});  // the hole before the marker
  EXPECT_EQ(std::memcmp(rows.data() + kRowBytes, "last row", 8), 0);
}

}  // namespace
}  // namespace mlacheck::io
