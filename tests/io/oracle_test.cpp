// The committed oracle file (written by Python safetensors) opens and reads as documented in
// data/oracles/README.md: a real third-party file, not one of our own.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "io/safetensors.h"
#include "tests/support/test_data.h"

namespace mlacheck::io {
namespace {

class IoOracle : public ::testing::Test {
 protected:
  SafetensorsReader reader_{mlacheck::testing::quant_oracle_path()};
};

TEST_F(IoOracle, MetadataAndTensorCount) {
  EXPECT_EQ(reader_.metadata().at("format"), "mla-quant-oracle v1");
  EXPECT_EQ(reader_.names().size(), 50u);
  EXPECT_EQ(reader_.names().front(), "bf16_all__e4m3fn");  // data offset 0
}

TEST_F(IoOracle, DtypesAndShapes) {
  struct Row {
    const char* name;
    DType dtype;
    std::vector<int64_t> shape;
  };
  const Row rows[] = {
      {"bf16_all__e4m3fn", DType::U8, {65536}},
      {"tricky__x", DType::F32, {1216}},
      {"tricky__bf16_cuda", DType::BF16, {1216}},
      {"fp8__randn_1__e4m3fn__scale", DType::F32, {1}},
      {"mxfp4_special__x", DType::BF16, {24, 576}},
      {"mxfp4_special__aiter20260317_amd__fp4", DType::U8, {24, 288}},
      {"mxfp4_special__aiter20260317_amd__scale", DType::U8, {24, 18}},
  };
  for (const Row& r : rows) {
    const TensorInfo& info = reader_.info(r.name);
    EXPECT_EQ(info.dtype, r.dtype) << r.name;
    EXPECT_EQ(info.shape, r.shape) << r.name;
  }
}

TEST_F(IoOracle, KnownValues) {
  // e4m3fn code 0x38 is 1.0 (exponent 7 = bias, mantissa 0), and bf16 1.0 (0x3F80) encodes to it.
  const Tensor decoded = read_checked(reader_, "decode_e4m3fn", DType::F32, 1);
  EXPECT_EQ(decoded.view<float>()[0x38], 1.0f);
  EXPECT_EQ(decoded.view<float>()[0x00], 0.0f);
  const Tensor codes = read_checked(reader_, "bf16_all__e4m3fn", DType::U8, 1);
  EXPECT_EQ(codes.view<uint8_t>()[0x3F80], 0x38);
}

TEST_F(IoOracle, ReadRowsMatchesTheWholeTensor) {
  const Tensor whole = reader_.read("mxfp4_special__x");
  const std::size_t row_bytes = 576 * 2;
  std::vector<std::byte> rows(3 * row_bytes);
  reader_.read_rows("mxfp4_special__x", 5, 3, rows);
  EXPECT_EQ(std::memcmp(rows.data(), whole.bytes.data() + 5 * row_bytes, rows.size()), 0);
}

}  // namespace
}  // namespace mlacheck::io
