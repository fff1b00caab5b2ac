// The kernels' one operand decode (gpu/common/operand_decode.h) against the codecs of quant/, on
// the host (the functions are host + device; tests/gpu/mma_test.cpp runs the device build): every e4m3fn code pair, every MXFP4 code byte with every scale,
// and the f16 patterns of every fp8 value, bit for bit (NaN: NaN-ness, the codecs' payloads differ
// by platform as NUMERICS allows).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "gpu/common/operand_decode.h"
#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu::common {
namespace {

uint16_t bf16_of(float x) { return quant::f32_to_bf16(x); }
bool is_nan16(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0; }

void expect_same(uint16_t got, uint16_t want, const char* what, uint32_t input) {
  if (is_nan16(want)) {
    EXPECT_TRUE(is_nan16(got)) << what << " input 0x" << std::hex << input;
  } else {
    EXPECT_EQ(got, want) << what << " input 0x" << std::hex << input;
  }
}

TEST(OperandDecode, E4m3fnPairsToBf16AreTheCodecsValues) {
  for (uint32_t codes = 0; codes < 65536; ++codes) {
    const uint32_t got = e4m3fn_pair_to_bf16_pair(codes);
    const auto f = [](uint32_t c) { return quant::fp8_to_f32(static_cast<uint8_t>(c), quant::Fp8Format::e4m3fn); };
    expect_same(static_cast<uint16_t>(got), bf16_of(f(codes & 0xFF)), "low", codes);
    expect_same(static_cast<uint16_t>(got >> 16), bf16_of(f(codes >> 8)), "high", codes);
    if (HasFailure()) return;
  }
}

// The four-code decode's host path (its NVIDIA path is checked on the device, tests/gpu/mma_test.cpp)
// gives the codec's values for every pair of codes in both halves, NaN as NaN.
TEST(OperandDecode, E4m3fnQuadsToBf16AreTheCodecsValues) {
  const auto f = [](uint32_t c) { return quant::fp8_to_f32(static_cast<uint8_t>(c), quant::Fp8Format::e4m3fn); };
  for (uint32_t codes = 0; codes < 65536; ++codes) {
    const uint32_t quad = codes | codes << 16;
    uint32_t lo = 0, hi = 0;
    e4m3fn_quad_to_bf16_pairs(quad, lo, hi);
    for (const uint32_t got : {lo, hi}) {
      expect_same(static_cast<uint16_t>(got), bf16_of(f(codes & 0xFF)), "quad, low", codes);
      expect_same(static_cast<uint16_t>(got >> 16), bf16_of(f(codes >> 8)), "quad, high", codes);
    }
    if (HasFailure()) return;
  }
}

TEST(OperandDecode, Mxfp4PairsToBf16AreTheCodecsValues) {
  for (uint32_t scale = 0; scale < 256; ++scale) {
    const float s = quant::e8m0_to_f32(static_cast<uint8_t>(scale));
    for (uint32_t codes = 0; codes < 256; ++codes) {
      const uint32_t got = mxfp4_pair_to_bf16_pair(codes, scale);
      const float lo = quant::detail::mul_amd_nan(quant::e2m1_to_f32(codes & 0x0F), s);
      const float hi = quant::detail::mul_amd_nan(quant::e2m1_to_f32(codes >> 4), s);
      expect_same(static_cast<uint16_t>(got), bf16_of(lo), "low", scale << 8 | codes);
      expect_same(static_cast<uint16_t>(got >> 16), bf16_of(hi), "high", scale << 8 | codes);
      if (HasFailure()) return;
    }
  }
}

// The eight-code MXFP4 decode (table lookups, gpu/common/operand_decode.h): the scale factor is
// 2^(s-127) for every E8M0 scale (the bf16 subnormal 2^-127 for 0, NaN for 255); the host path (the
// lookups by the portable model of the permute, then the scale in float32) and the lookups alone
// (scale 127 = 1) give mxfp4_pair_to_bf16_pair's bits for every code byte in every byte position
// and every scale (NaN by NaN-ness).
TEST(OperandDecode, Mxfp4OctetsByTableLookupsAreThePairDecode) {
  for (uint32_t scale = 0; scale < 256; ++scale) {
    const float factor = quant::f32_from_bits(mxfp4_scale_bf16(scale) << 16);
    if (scale == 255) {
      EXPECT_TRUE(std::isnan(factor));
    } else {
      EXPECT_EQ(factor, std::ldexp(1.0f, static_cast<int>(scale) - 127)) << scale;
    }
    for (uint32_t c = 0; c < 256; ++c) {
      const uint32_t word = c | ((c + 85u) & 0xFFu) << 8 | ((c + 170u) & 0xFFu) << 16 | ((c + 255u) & 0xFFu) << 24;
      uint32_t got[4];
      mxfp4_octet_to_bf16_pairs(word, scale, got);
      for (int k = 0; k < 4; ++k) {
        const uint32_t byte = (word >> (8 * k)) & 0xFFu;
        const uint32_t want = mxfp4_pair_to_bf16_pair(byte, scale);
        expect_same(static_cast<uint16_t>(got[k]), static_cast<uint16_t>(want), "octet, low", scale << 8 | byte);
        expect_same(static_cast<uint16_t>(got[k] >> 16), static_cast<uint16_t>(want >> 16), "octet, high",
                    scale << 8 | byte);
        if (scale == 127) {
          EXPECT_EQ(mxfp4_unscaled_pair_model(word, k), want) << std::hex << byte;
        }
      }
      if (HasFailure()) return;
    }
  }
}

TEST(OperandDecode, F16PatternsOfFp8ValuesAreExact) {
  for (const auto format : {quant::Fp8Format::e4m3fn, quant::Fp8Format::e4m3fnuz}) {
    for (uint32_t c = 0; c < 256; ++c) {
      const float v = quant::fp8_to_f32(static_cast<uint8_t>(c), format);
      const uint16_t h = f16_bits(v);
      if (std::isnan(v)) {
        EXPECT_EQ(h & 0x7C00, 0x7C00) << c;
        EXPECT_NE(h & 0x03FF, 0) << c;
        continue;
      }
      // Decode the f16 pattern independently: sign, 5-bit exponent (bias 15), 10-bit mantissa.
      const int e = (h >> 10) & 0x1F;
      const int m = h & 0x3FF;
      const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
      EXPECT_EQ((h & 0x8000) ? -mag : mag, static_cast<double>(v)) << "code " << c;
      const uint32_t pair = e4m3fn_pair_to_f16_pair(c | (c << 8));
      if (format == quant::Fp8Format::e4m3fn && !std::isnan(v)) {
        EXPECT_EQ(pair & 0xFFFF, h) << c;
        EXPECT_EQ(pair >> 16, h) << c;
      }
    }
  }
}

}  // namespace
}  // namespace mlacheck::gpu::common
