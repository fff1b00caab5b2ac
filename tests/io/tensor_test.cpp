// Tensor: element counts, zero-filled construction, typed views and copies, with their checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "io/tensor.h"

namespace mlacheck::io {
namespace {

TEST(IoTensor, NumelOfOrdinaryEmptyAndZeroDimShapes) {
  EXPECT_EQ(Tensor::zeros(DType::F32, {2, 3, 4}).numel(), 24);
  EXPECT_EQ(Tensor::zeros(DType::F32, {0}).numel(), 0);
  EXPECT_EQ(Tensor::zeros(DType::F32, {2, 0}).numel(), 0);
  EXPECT_EQ(Tensor::zeros(DType::F32, {}).numel(), 1);  // 0-d: a scalar
}

TEST(IoTensor, ZerosHasTheRightByteCountAllZero) {
  const Tensor t = Tensor::zeros(DType::BF16, {3, 5});
  EXPECT_EQ(t.dtype, DType::BF16);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 5}));
  ASSERT_EQ(t.bytes.size(), 30u);
  for (const std::byte b : t.bytes) EXPECT_EQ(b, std::byte{0});
}

TEST(IoTensor, ZerosRejectsNegativeAndOverflowingShapes) {
  EXPECT_THROW(Tensor::zeros(DType::F32, {2, -1}), Error);
  EXPECT_THROW(Tensor::zeros(DType::F32, {INT64_MAX}), Error);  // numel fits, bytes do not
  EXPECT_THROW(Tensor::zeros(DType::U8, {int64_t{1} << 32, int64_t{1} << 32}), Error);
  // A zero extent does not excuse an overflow elsewhere (numel() must be safe to compute).
  EXPECT_THROW(Tensor::zeros(DType::U8, {int64_t{1} << 32, int64_t{1} << 32, 0}), Error);
}

TEST(IoTensor, NumelOfAHandBuiltNegativeShapeThrows) {
  Tensor t;
  t.shape = {4, -2};
  EXPECT_THROW((void)t.numel(), Error);
}

TEST(IoTensor, CopyOfKeepsTheValues) {
  const std::vector<float> values{1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  const Tensor t = Tensor::copy_of<float>(DType::F32, {2, 3}, values);
  const auto view = t.view<float>();
  ASSERT_EQ(view.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(view[i], values[i]) << i;
}

TEST(IoTensor, CopyOfChecksCountAndElementSize) {
  const std::vector<float> five(5, 1.0f);
  EXPECT_THROW(Tensor::copy_of<float>(DType::F32, {2, 3}, five), Error);
  const std::vector<float> six(6, 1.0f);
  EXPECT_THROW(Tensor::copy_of<float>(DType::BF16, {2, 3}, six), Error);  // 4-byte T for 2-byte dtype
  const std::vector<uint16_t> bf16(6, 0x3F80);
  EXPECT_NO_THROW(Tensor::copy_of<uint16_t>(DType::BF16, {2, 3}, bf16));
}

TEST(IoTensor, ViewRejectsAWrongElementSize) {
  Tensor t = Tensor::zeros(DType::BF16, {4});
  EXPECT_THROW((void)t.view<float>(), Error);
  EXPECT_THROW((void)std::as_const(t).view<uint8_t>(), Error);
  EXPECT_EQ(t.view<uint16_t>().size(), 4u);
}

TEST(IoTensor, MutableViewWritesThrough) {
  Tensor t = Tensor::zeros(DType::I32, {3});
  t.view<int32_t>()[1] = -7;
  EXPECT_EQ(std::as_const(t).view<int32_t>()[1], -7);
}

}  // namespace
}  // namespace mlacheck::io
