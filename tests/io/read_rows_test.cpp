// read_rows: a slice of the outermost dimension, read straight from the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "io/safetensors.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::ScratchDir;

class IoReadRows : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<int32_t> values(5 * 3);
    std::iota(values.begin(), values.end(), 0);  // row r holds 3r, 3r+1, 3r+2
    SafetensorsWriter writer;
    writer.add("pad", Tensor::zeros(DType::I32, {7}));  // so "m" does not start at offset 0
    writer.add("m", Tensor::copy_of<int32_t>(DType::I32, {5, 3}, values));
    writer.add("empty_rows", Tensor::zeros(DType::I32, {2, 0}));
    writer.add("scalar", Tensor::zeros(DType::I32, {}));
    writer.write(dir_ / "rows.safetensors");
    reader_.emplace(dir_ / "rows.safetensors");
  }
  std::vector<int32_t> rows(int64_t first, int64_t count) {
    std::vector<int32_t> out(static_cast<std::size_t>(count * 3), -1);
    reader_->read_rows("m", first, count, std::as_writable_bytes(std::span(out)));
    return out;
  }
  std::string error_of(std::string_view name, int64_t first, int64_t count, std::size_t bytes) {
    std::vector<std::byte> out(bytes);
    try {
      reader_->read_rows(name, first, count, out);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "read_rows(" << name << ", " << first << ", " << count << ") did not throw";
    return {};
  }

  ScratchDir dir_;
  std::optional<SafetensorsReader> reader_;
};

TEST_F(IoReadRows, MiddleRows) { EXPECT_EQ(rows(1, 2), (std::vector<int32_t>{3, 4, 5, 6, 7, 8})); }
TEST_F(IoReadRows, LastRow) { EXPECT_EQ(rows(4, 1), (std::vector<int32_t>{12, 13, 14})); }
TEST_F(IoReadRows, AllRowsEqualRead) {
  const Tensor whole = reader_->read("m");
  const auto v = whole.view<int32_t>();
  EXPECT_EQ(rows(0, 5), std::vector<int32_t>(v.begin(), v.end()));
}
TEST_F(IoReadRows, ZeroRowsAtEitherEnd) {
  EXPECT_TRUE(rows(0, 0).empty());
  EXPECT_TRUE(rows(5, 0).empty());
}
TEST_F(IoReadRows, RowsOfZeroBytes) {
  std::vector<std::byte> none;
  EXPECT_NO_THROW(reader_->read_rows("empty_rows", 0, 2, none));
}

TEST_F(IoReadRows, RangeOutsideTheTensorNamesFileAndTensor) {
  for (const auto& [first, count] : std::vector<std::pair<int64_t, int64_t>>{
           {4, 2}, {6, 0}, {-1, 1}, {0, -1}, {1, INT64_MAX}, {INT64_MAX, 1}}) {
    const std::string msg = error_of("m", first, count, 0);
    EXPECT_NE(msg.find("rows.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'m'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("outside"), std::string::npos) << msg;
  }
}

TEST_F(IoReadRows, WrongOutputSize) {
  for (const std::size_t bytes : {0u, 23u, 25u}) {  // 2 rows of 3 int32 = 24 bytes
    const std::string msg = error_of("m", 1, 2, bytes);
    EXPECT_NE(msg.find("'m'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("need 24"), std::string::npos) << msg;
  }
}

TEST_F(IoReadRows, ZeroDimTensorHasNoRows) {
  const std::string msg = error_of("scalar", 0, 1, 4);
  EXPECT_NE(msg.find("'scalar'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("0-d"), std::string::npos) << msg;
}

TEST_F(IoReadRows, AbsentTensor) {
  const std::string msg = error_of("nope", 0, 1, 12);
  EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
}

}  // namespace
}  // namespace mlacheck::io
