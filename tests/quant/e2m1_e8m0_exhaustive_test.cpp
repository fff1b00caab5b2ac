// Exhaustive E2M1 and E8M0 tests: all 16 E2M1 codes, all 256 E8M0 codes, every bf16 input through
// both E2M1 rules and the block exponent, and a float32 sweep of every exponent with the
// fraction patterns at which the rules change.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/bulk.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "tests/quant/hex_format.h"
#include "tests/quant/reference_codecs.h"

namespace mlacheck::quant {
namespace {

using testing::e2m1_hex;
using testing::e8m0_hex;
using testing::f32_hex;
using testing::Mismatches;

// Float32 inputs that stress every rounding rule: each exponent field with fraction patterns at
// the E2M1 half-steps (top fraction bits 0b01, 0b10, 0b11 exactly and one ulp off), at the
// block-exponent threshold 0.75 (0x600000) and the extremes.
std::vector<float> float32_sweep() {
  static constexpr uint32_t kFractions[] = {0x000000, 0x000001, 0x1FFFFF, 0x200000,
                                            0x200001, 0x3FFFFF, 0x400000, 0x400001,
                                            0x5FFFFF, 0x600000, 0x600001, 0x7FFFFF};
  std::vector<float> xs;
  for (uint32_t e = 0; e < 256; ++e)
    for (const uint32_t frac : kFractions)
      for (const uint32_t sign : {0u, 0x80000000u}) {
        const uint32_t u = sign | (e << 23) | frac;
        if (!detail::is_nan_bits(u)) xs.push_back(f32_from_bits(u));
      }
  return xs;
}

TEST(QuantE2M1Exhaustive, EveryCodeDecodesAndReencodes) {
  Mismatches bad;
  for (unsigned c = 0; c < 16; ++c) {
    const auto code = static_cast<uint8_t>(c);
    const float v = e2m1_to_f32(code);
    const double want = testing::ref_e2m1_value(code);
    if (static_cast<double>(v) != want || std::signbit(v) != std::signbit(want))
      bad.add(e2m1_hex(code) + " decodes to " + f32_hex(v));
    for (const auto r : {E2M1Rounding::rne, E2M1Rounding::ties_away})
      if (f32_to_e2m1(v, r) != code)
        bad.add(e2m1_hex(code) + " re-encodes to " + e2m1_hex(f32_to_e2m1(v, r)));
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

void expect_e2m1_matches_reference(const std::vector<float>& xs, E2M1Rounding r) {
  Mismatches bad;
  for (const float x : xs) {
    const uint8_t got = f32_to_e2m1(x, r);
    const uint8_t want = testing::ref_e2m1_encode(x, r);
    if (got != want) bad.add(f32_hex(x) + ": got " + e2m1_hex(got) + ", want " + e2m1_hex(want));
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

std::vector<float> all_bf16_numbers() {
  std::vector<float> xs;
  for (unsigned b = 0; b < 65536; ++b) {
    const float x = bf16_to_f32(static_cast<uint16_t>(b));
    if (!std::isnan(x)) xs.push_back(x);
  }
  return xs;
}

TEST(QuantE2M1Exhaustive, EveryBf16NumberRne) {
  expect_e2m1_matches_reference(all_bf16_numbers(), E2M1Rounding::rne);
}
TEST(QuantE2M1Exhaustive, EveryBf16NumberTiesAway) {
  expect_e2m1_matches_reference(all_bf16_numbers(), E2M1Rounding::ties_away);
}
TEST(QuantE2M1Exhaustive, Float32SweepRne) {
  expect_e2m1_matches_reference(float32_sweep(), E2M1Rounding::rne);
}
TEST(QuantE2M1Exhaustive, Float32SweepTiesAway) {
  expect_e2m1_matches_reference(float32_sweep(), E2M1Rounding::ties_away);
}

// E8M0: every byte decodes to 2^(b - 127), 0x00 to the subnormal 2^-127, 0xFF to NaN 0x7F800001
// (NUMERICS §5.7); every exponent the quantizer produces encodes to e + 127 and decodes to 2^e.
TEST(QuantE8M0Exhaustive, EveryByteDecodes) {
  Mismatches bad;
  for (unsigned b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    const float v = e8m0_to_f32(byte);
    if (b == 0xFF) {
      if (f32_bits(v) != 0x7F800001u) bad.add(e8m0_hex(byte) + " decodes to " + f32_hex(v));
      continue;
    }
    if (static_cast<double>(v) != std::ldexp(1.0, static_cast<int>(b) - 127))
      bad.add(e8m0_hex(byte) + " decodes to " + f32_hex(v));
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

TEST(QuantE8M0Exhaustive, EveryExponentEncodesAndDecodes) {
  for (int e = -127; e <= 127; ++e) {
    const uint8_t b = e8m0_from_exponent(e);
    EXPECT_EQ(b, e + 127) << "e = " << e;
    EXPECT_EQ(static_cast<double>(e8m0_to_f32(b)), std::ldexp(1.0, e)) << "e = " << e;
  }
}

void expect_block_exponent_matches_reference(const std::vector<float>& amaxes) {
  Mismatches bad;
  for (const float amax : amaxes) {
    const int got = mxfp4_block_exponent(amax);
    const int want = testing::ref_block_exponent(amax);
    if (got != want)
      bad.add(f32_hex(amax) + ": got " + std::to_string(got) + ", want " + std::to_string(want));
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

TEST(QuantBlockExponentExhaustive, EveryNonNegativeBf16) {
  std::vector<float> xs;
  for (unsigned b = 0; b <= 0x7F80; ++b) xs.push_back(bf16_to_f32(static_cast<uint16_t>(b)));
  expect_block_exponent_matches_reference(xs);
}

TEST(QuantBlockExponentExhaustive, Float32Sweep) {
  std::vector<float> xs;
  for (const float x : float32_sweep())
    if (!std::signbit(x)) xs.push_back(x);
  expect_block_exponent_matches_reference(xs);
}

// MXFP4 round trip through the bulk quantizer of every E2M1 code under every scale byte that an
// unflushed multiplier can give, 0x00 .. 0xFC (e = -127 .. 125): one block per (byte, code),
// holding 6 * 2^e at element 0 (which fixes e), the code's value times 2^e at odd elements and
// its negation at the other even ones. Byte 0xFD (e = 126) is never produced: amax >= 1.75 * 2^127
// already rounds r to Inf, so e jumps from 125 to 127 (checked below). 0xFE (e = 127, flushed
// multiplier) and 0xFF (never produced) are covered in bulk_test.cpp.
TEST(QuantMxfp4Exhaustive, EveryCodeUnderEveryScaleByteRoundTrips) {
  constexpr unsigned kLastByte = 0xFC;
  std::vector<float> x;
  for (unsigned byte = 0; byte <= kLastByte; ++byte)
    for (unsigned c = 0; c < 16; ++c) {
      const int e = static_cast<int>(byte) - 127;
      const auto v =
          static_cast<float>(testing::ref_e2m1_value(static_cast<uint8_t>(c)) * std::ldexp(1.0, e));
      x.push_back(static_cast<float>(std::ldexp(6.0, e)));
      for (std::size_t j = 1; j < kMxfp4BlockSize; ++j) x.push_back(j % 2 == 1 ? v : -v);
    }
  for (const auto r : {E2M1Rounding::rne, E2M1Rounding::ties_away}) {
    std::vector<uint8_t> packed(x.size() / 2), scales(x.size() / kMxfp4BlockSize);
    mxfp4_quantize(x, kMxfp4BlockSize * 2, r, packed, scales);
    std::vector<float> back(x.size());
    mxfp4_dequantize(packed, scales, kMxfp4BlockSize * 2, back);
    Mismatches bad;
    for (std::size_t b = 0; b < scales.size(); ++b) {
      const auto byte = static_cast<uint8_t>(b / 16);
      const auto code = static_cast<uint8_t>(b % 16);
      const uint8_t pair = packed[b * 16];       // elements 0 (the 6 * 2^e anchor) and 1
      const uint8_t pair2 = packed[b * 16 + 1];  // elements 2 (negated) and 3
      const bool codes_ok = pair == (0x7 | (code << 4)) && pair2 == ((code ^ 0x8) | (code << 4));
      bool values_ok = true;
      for (std::size_t j = 0; j < kMxfp4BlockSize; ++j)
        values_ok = values_ok && f32_bits(back[b * 32 + j]) == f32_bits(x[b * 32 + j]);
      if (scales[b] != byte || !codes_ok || !values_ok)
        bad.add("scale " + e8m0_hex(byte) + ", code " + e2m1_hex(code) + ": got scale " +
                e8m0_hex(scales[b]) + ", code " + e2m1_hex(static_cast<uint8_t>(pair >> 4)) +
                ", element 1 back " + f32_hex(back[b * 32 + 1]));
    }
    EXPECT_EQ(bad.count(), 0u) << bad.report();
  }
  // The gap at e = 126: the largest amax below 0x7F600000 gives 125, 0x7F600000 gives 127.
  EXPECT_EQ(mxfp4_block_exponent(f32_from_bits(0x7F5FFFFFu)), 125);
  EXPECT_EQ(mxfp4_block_exponent(f32_from_bits(0x7F600000u)), 127);
}

}  // namespace
}  // namespace mlacheck::quant
