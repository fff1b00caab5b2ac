// tests/gpu/bit_differences.h on the host (the GPU tests that use it skip without a device): equal
// values count nothing; a changed bf16 element, a -0 against +0 LSE and two NaNs of different
// payload each count once.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "quant/bits.h"
#include "tests/gpu/bit_differences.h"

namespace mlacheck::gpu::test {
namespace {

TEST(BitDifferences, CountsEveryBitPatternThatDiffers) {
  const std::vector<uint16_t> out{0x3F80, 0x7FC0, 0x8000};
  const std::vector<float> lse{1.0f, 0.0f, quant::f32_from_bits(0x7FC00000u)};
  EXPECT_EQ(bit_differences(out, out, lse, lse).out, 0u);
  EXPECT_EQ(bit_differences(out, out, lse, lse).lse, 0u);

  const std::vector<uint16_t> out2{0x3F80, 0x7FC1, 0x0000};  // another NaN payload, +0 for -0
  const std::vector<float> lse2{1.0f, -0.0f, quant::f32_from_bits(0x7FC00001u)};
  const BitDifferences d = bit_differences(out, out2, lse, lse2);
  EXPECT_EQ(d.out, 2u);
  EXPECT_EQ(d.lse, 2u);
}

}  // namespace
}  // namespace mlacheck::gpu::test
