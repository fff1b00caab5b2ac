// Corner tables: one row per hand-picked input with the expected result written from NUMERICS,
// and a comment saying why the row is there. Failures print every field in hex.
#include <gtest/gtest.h>

#include <cstdint>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "tests/quant/hex_format.h"

namespace mlacheck::quant {
namespace {

using testing::bf16_hex;
using testing::e2m1_hex;
using testing::e8m0_hex;
using testing::f32_hex;
using testing::fp8_hex;

constexpr Overflow kNaN = Overflow::nan;
constexpr Overflow kSat = Overflow::saturate;

struct Fp8Row {
  uint32_t x;  // float32 bits
  Overflow overflow;
  uint8_t want;
  const char* why;
};

// float32 -> e4m3fn (§3.2).
constexpr Fp8Row kE4m3fnRows[] = {
    {0x43E00000, kNaN, 0x7E, "448, the max"},
    {0x43E08000, kNaN, 0x7E, "449: just past the max, rounds down to it"},
    {0x43E80000, kNaN, 0x7E, "464: tie between 448 and 480, even mantissa 110 = 448"},
    {0x43E80001, kNaN, 0x7F, "464 + 1 ulp rounds past the max: NaN (torch 2.11)"},
    {0x43EFFFFF, kNaN, 0x7F, "just below 480: NaN"},
    {0x43F00000, kNaN, 0x7F, "480 = 0x43F00000: NaN"},
    {0xC3E80001, kNaN, 0xFF, "-(464 + 1 ulp): NaN with the sign"},
    {0x43E80001, kSat, 0x7E, "past the max, saturate: 448"},
    {0xC3F00000, kSat, 0xFE, "-480, saturate: -448"},
    {0x7F800000, kNaN, 0x7F, "+Inf: NaN"},
    {0xFF800000, kNaN, 0xFF, "-Inf: NaN with the sign"},
    {0x7F800000, kSat, 0x7E, "+Inf, saturate: 448"},
    {0xFF800000, kSat, 0xFE, "-Inf, saturate: -448"},
    {0x7FC00000, kNaN, 0x7F, "NaN: 0x7F"},
    {0xFFC00000, kNaN, 0xFF, "negative NaN: 0xFF (sign copied)"},
    {0x7F800001, kSat, 0x7F, "signalling NaN, saturate: still NaN"},
    {0x3C800000, kNaN, 0x08, "2^-6: the smallest normal"},
    {0x3C7FFFFF, kNaN, 0x08, "just below 2^-6 rounds up into the first normal"},
    {0x3B000000, kNaN, 0x01, "2^-9: the smallest subnormal"},
    {0x3A800000, kNaN, 0x00, "2^-10: tie between 0 and 2^-9, even = 0"},
    {0x3A800001, kNaN, 0x01, "2^-10 + 1 ulp: 2^-9"},
    {0x3B400000, kNaN, 0x02, "1.5 * 2^-9: tie between codes 1 and 2, even = 2"},
    {0x3BA00000, kNaN, 0x02, "2.5 * 2^-9: tie between codes 2 and 3, even = 2"},
    {0x3C700000, kNaN, 0x08, "7.5 * 2^-9: tie between 0x07 and 0x08 (2^-6), even = 0x08"},
    {0x3F880000, kNaN, 0x38, "1.0625: tie between 1 and 1.125, even = 1"},
    {0x3F980000, kNaN, 0x3A, "1.1875: tie between 1.125 and 1.25, even = 1.25"},
    {0x3F980001, kNaN, 0x3A, "1.1875 + 1 ulp: up"},
    {0x3F97FFFF, kNaN, 0x39, "1.1875 - 1 ulp: down"},
    {0x00000000, kNaN, 0x00, "+0"},
    {0x80000000, kNaN, 0x80, "-0 keeps its sign"},
    {0x00000001, kNaN, 0x00, "the smallest float32 subnormal rounds to +0"},
    {0x80000001, kNaN, 0x80, "... and its negative to -0"},
};

// float32 -> e4m3fnuz (§3.3).
constexpr Fp8Row kE4m3fnuzRows[] = {
    {0x43700000, kNaN, 0x7F, "240, the max"},
    {0x4377FFFF, kNaN, 0x7F, "just below 248: 240"},
    {0x43780000, kNaN, 0x80, "248: tie whose even neighbour is 256, past the max: NaN"},
    {0xC3780000, kNaN, 0x80, "-248: NaN, which has no sign"},
    {0x43800000, kNaN, 0x80, "256 = 0x43800000: NaN"},
    {0x43780000, kSat, 0x7F, "248, saturate: 240"},
    {0xC3780000, kSat, 0xFF, "-248, saturate: -240"},
    {0x7F800000, kNaN, 0x80, "+Inf: NaN"},
    {0xFF800000, kSat, 0xFF, "-Inf, saturate: -240"},
    {0xFFC00000, kNaN, 0x80, "negative NaN: 0x80"},
    {0x7FC00000, kSat, 0x80, "NaN, saturate: still NaN"},
    {0x3C000000, kNaN, 0x08, "2^-7: the smallest normal"},
    {0x3A800000, kNaN, 0x01, "2^-10: the smallest subnormal"},
    {0x3A000000, kNaN, 0x00, "2^-11: tie between 0 and 2^-10, even = 0"},
    {0xBA000000, kNaN, 0x00, "-2^-11 rounds to zero, which is +0 (no -0)"},
    {0xBA000001, kNaN, 0x81, "-(2^-11 + 1 ulp): -2^-10"},
    {0x80000000, kNaN, 0x00, "-0: +0"},
    {0x3F800000, kNaN, 0x40, "1.0: exponent 8 = bias"},
};

TEST(QuantCornerTable, E4m3fnEncode) {
  for (const auto& r : kE4m3fnRows) {
    const uint8_t got = f32_to_fp8(f32_from_bits(r.x), Fp8Format::e4m3fn, r.overflow);
    EXPECT_EQ(got, r.want) << r.why << ": " << f32_hex(f32_from_bits(r.x)) << " -> "
                           << fp8_hex(got, Fp8Format::e4m3fn) << ", want "
                           << fp8_hex(r.want, Fp8Format::e4m3fn);
  }
}

TEST(QuantCornerTable, E4m3fnuzEncode) {
  for (const auto& r : kE4m3fnuzRows) {
    const uint8_t got = f32_to_fp8(f32_from_bits(r.x), Fp8Format::e4m3fnuz, r.overflow);
    EXPECT_EQ(got, r.want) << r.why << ": " << f32_hex(f32_from_bits(r.x)) << " -> "
                           << fp8_hex(got, Fp8Format::e4m3fnuz) << ", want "
                           << fp8_hex(r.want, Fp8Format::e4m3fnuz);
  }
}

// FP8 decode of the special codes (§3.4), as float32 bits.
TEST(QuantCornerTable, Fp8Decode) {
  const struct {
    uint8_t code;
    Fp8Format f;
    uint32_t want;
    const char* why;
  } rows[] = {
      {0x7F, Fp8Format::e4m3fn, 0x7FF00000, "e4m3fn NaN: PyTorch's bits"},
      {0xFF, Fp8Format::e4m3fn, 0xFFF00000, "e4m3fn negative NaN"},
      {0x80, Fp8Format::e4m3fn, 0x80000000, "e4m3fn -0"},
      {0x7E, Fp8Format::e4m3fn, 0x43E00000, "e4m3fn max 448"},
      {0x01, Fp8Format::e4m3fn, 0x3B000000, "e4m3fn min subnormal 2^-9"},
      {0x80, Fp8Format::e4m3fnuz, 0x7F800001, "e4m3fnuz NaN (its only one)"},
      {0x7F, Fp8Format::e4m3fnuz, 0x43700000, "e4m3fnuz max 240"},
      {0xFF, Fp8Format::e4m3fnuz, 0xC3700000, "e4m3fnuz -240"},
      {0x01, Fp8Format::e4m3fnuz, 0x3A800000, "e4m3fnuz min subnormal 2^-10"},
  };
  for (const auto& r : rows) {
    const float got = fp8_to_f32(r.code, r.f);
    EXPECT_EQ(f32_bits(got), r.want) << r.why << ": " << fp8_hex(r.code, r.f) << " -> "
                                     << f32_hex(got) << ", want " << f32_hex(f32_from_bits(r.want));
  }
  EXPECT_EQ(fp8_max(Fp8Format::e4m3fn), 448.0f);
  EXPECT_EQ(fp8_max(Fp8Format::e4m3fnuz), 240.0f);
}

// float32 -> bf16 (§2.1).
TEST(QuantCornerTable, Bf16Encode) {
  const struct {
    uint32_t x;
    uint16_t want;
    const char* why;
  } rows[] = {
      {0x00008000, 0x0000, "subnormal tie, even = 0"},
      {0x00018000, 0x0002, "subnormal tie, odd LSB rounds up"},
      {0x00000001, 0x0000, "smallest subnormal rounds to 0, no flush needed"},
      {0x7F7F7FFF, 0x7F7F, "just below the tie under max: max finite"},
      {0x7F7F8000, 0x7F80, "tie at max with odd LSB: +Inf"},
      {0x3F808000, 0x3F80, "1 + 2^-8: tie, even = 1"},
      {0x3F818000, 0x3F82, "tie with odd LSB: up"},
      {0x80000000, 0x8000, "-0 keeps its sign"},
      {0x7F800000, 0x7F80, "+Inf"},
      {0xFF800000, 0xFF80, "-Inf"},
      {0x7F800001, kBf16NaN, "signalling NaN: 0x7FC0 (Decisions table)"},
      {0xFFC00001, kBf16NaN, "negative NaN: 0x7FC0, sign dropped as c10 does"},
  };
  for (const auto& r : rows) {
    const uint16_t got = f32_to_bf16(f32_from_bits(r.x));
    EXPECT_EQ(got, r.want) << r.why << ": " << f32_hex(f32_from_bits(r.x)) << " -> "
                           << bf16_hex(got) << ", want " << bf16_hex(r.want);
  }
  EXPECT_EQ(f32_bits(bf16_to_f32(0xFFC1)), 0xFFC10000u) << "bf16 -> f32 keeps NaN payloads";
}

// E2M1 under both rules (§5.3): the ties where they differ, saturation, NaN and the tiny
// elements of the old rule (AMD shift count mod 32).
TEST(QuantCornerTable, E2M1Encode) {
  const struct {
    uint32_t qx;
    uint8_t want_rne;
    uint8_t want_ties_away;
    const char* why;
  } rows[] = {
      {0x3E800000, 0x0, 0x1, "0.25: tie, rne -> 0, ties-away -> 0.5"},
      {0x3F400000, 0x2, 0x2, "0.75: tie, even is 1.0; away is 1.0 too"},
      {0x3FA00000, 0x2, 0x3, "1.25: rne -> 1.0, ties-away -> 1.5"},
      {0x3FE00000, 0x4, 0x4, "1.75: both 2.0"},
      {0x40200000, 0x4, 0x5, "2.5: rne -> 2.0, ties-away -> 3.0"},
      {0x40600000, 0x6, 0x6, "3.5: both 4.0"},
      {0x40A00000, 0x6, 0x7, "5.0: rne -> 4.0, ties-away -> 6.0"},
      {0x40A00001, 0x7, 0x7, "just above 5: 6.0"},
      {0x40B00000, 0x7, 0x7, "5.5: 6.0"},
      {0x40C00000, 0x7, 0x7, "6.0: max"},
      {0x42C80000, 0x7, 0x7, "100: saturates at 6"},
      {0x7F800000, 0x7, 0x7, "+Inf: saturates at 6"},
      {0xFF800000, 0xF, 0xF, "-Inf: -6"},
      {0x80000000, 0x8, 0x8, "-0: sign bit kept"},
      {0xBDCCCCCD, 0x8, 0x8, "-0.1 rounds to -0"},
      {0x7FC00000, 0x3, 0x7, "NaN 0x7FC00000: new rule 1.5 (AMD payload), old 6"},
      {0x7FFFFFFF, 0x4, 0x7, "NaN 0x7FFFFFFF (NVIDIA canonical): 2.0 / 6"},
      {0x7F800001, 0x2, 0x7, "NaN 0x7F800001: 1.0 / 6"},
      {0xFFC00000, 0xB, 0xF, "negative NaN: sign kept"},
      {0x2F800000, 0x0, 0x0, "2^-32 (E = 95, shift 31): 0 under both"},
      {0x2F000000, 0x0, 0x1, "2^-33 (E = 94, shift 32 -> 0 on AMD): 0.5"},
      {0x2F400000, 0x0, 0x2, "1.5 * 2^-33 (E = 94, F >= 2^22): 1.0"},
      {0x2E800000, 0x0, 0x1, "2^-34 (E = 93, shift 33 -> 1): 0.5"},
      {0x2E000000, 0x0, 0x0, "2^-35 (E = 92, shift 34 -> 2): 0"},
      {0x1F000000, 0x0, 0x1, "2^-65 (E = 62, shift 64 -> 0): 0.5"},
      {0x0F000000, 0x0, 0x1, "2^-97 (E = 30, shift 96 -> 0): 0.5"},
      {0x0E800000, 0x0, 0x1, "2^-98 (E = 29, shift 97 -> 1): 0.5"},
      {0x8F000000, 0x8, 0x9, "-2^-97: -0.5 with the sign"},
      {0x00400000, 0x0, 0x0, "float32 subnormal: 0 under both"},
  };
  for (const auto& r : rows) {
    const float qx = f32_from_bits(r.qx);
    const uint8_t rne = f32_to_e2m1(qx, E2M1Rounding::rne);
    const uint8_t away = f32_to_e2m1(qx, E2M1Rounding::ties_away);
    EXPECT_EQ(rne, r.want_rne) << r.why << " (rne): " << f32_hex(qx) << " -> " << e2m1_hex(rne)
                               << ", want " << e2m1_hex(r.want_rne);
    EXPECT_EQ(away, r.want_ties_away) << r.why << " (ties-away): " << f32_hex(qx) << " -> "
                                      << e2m1_hex(away) << ", want " << e2m1_hex(r.want_ties_away);
  }
}

// Block exponent and E8M0 (§5.2, §5.7).
TEST(QuantCornerTable, BlockExponent) {
  const struct {
    uint32_t amax;
    int want;
    const char* why;
  } rows[] = {
      {0x00000000, -127, "amax 0: log2(0) = -Inf, clamped"},
      {0x005FFFFF, -127, "subnormal below 0x00600000: r = 0"},
      {0x00600000, -127, "r = 2^-126: e = -128, clamped"},
      {0x02000000, -125, "2^-123: e = -123 - 2"},
      {0x40C00000, 0, "6.0: r = 4, e = 0"},
      {0x40DFFFFF, 0, "just below 7 (fraction < 0.75): e = 0"},
      {0x40E00000, 1, "7.0 = 1.75 * 4: rounds up to 8, e = 1"},
      {0x40600000, 0, "3.5 = 1.75 * 2: r = 4, e = 0"},
      {0x405FFFFF, -1, "just below 3.5: r = 2, e = -1"},
      {0x3F800000, -2, "1.0: e = -2"},
      {0x7F5FFFFF, 125, "largest amax with a finite r = 2^127: e = 125"},
      {0x7F600000, 127, "0x7F600000: r overflows to Inf, e = 127"},
      {0x7F7F0000, 127, "bf16 max: e = 127"},
      {0x7F800000, 127, "Inf: e = 127"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(mxfp4_block_exponent(f32_from_bits(r.amax)), r.want)
        << r.why << ": " << f32_hex(f32_from_bits(r.amax));
  }
  EXPECT_EQ(e8m0_from_exponent(-127), 0x00) << "e = -127 is byte 0x00 (AMD wrap, §5.2 step 4)";
  EXPECT_EQ(e8m0_from_exponent(-8), 0x77) << "2^-8, typical randn * 0.02 block (§5.2)";
  EXPECT_EQ(e8m0_from_exponent(127), 0xFE);
  EXPECT_EQ(f32_bits(e8m0_to_f32(0x00)), 0x00400000u) << "2^-127 is a float32 subnormal";
  EXPECT_EQ(f32_bits(e8m0_to_f32(0xFF)), 0x7F800001u) << "0xFF is NaN";
  EXPECT_EQ(f32_bits(e8m0_to_f32(0xFE)), 0x7F000000u) << "2^127";
  EXPECT_EQ(e8m0_hex(0x7F), "0x7F [e=0x7F] 1");
}

// torch's float32 -> e8m0 cast (c10), as f32_to_e8m0 (§5.7).
TEST(QuantCornerTable, E8M0TorchCast) {
  const struct {
    uint32_t x;
    uint8_t want;
    const char* why;
  } rows[] = {
      {0x3F800000, 0x7F, "1.0"},
      {0xBF800000, 0x7F, "-1.0: the sign is ignored"},
      {0x3FC00000, 0x80, "1.5: fraction exactly 0.5 of a normal rounds up"},
      {0x3FBFFFFF, 0x7F, "just below 1.5: down"},
      {0x00400000, 0x00, "subnormal 2^-127: fraction 0.5 with no implicit one, stays"},
      {0x00400001, 0x01, "just above: up"},
      {0x00000000, 0x00, "0: 0x00 (which decodes to 2^-127)"},
      {0x7F400000, 0xFF, "1.5 * 2^127 rounds up to 0xFF = NaN"},
      {0x7F800000, 0xFF, "Inf"},
      {0x7FC00000, 0xFF, "NaN"},
  };
  for (const auto& r : rows) {
    const uint8_t got = f32_to_e8m0(f32_from_bits(r.x));
    EXPECT_EQ(got, r.want) << r.why << ": " << f32_hex(f32_from_bits(r.x)) << " -> "
                           << e8m0_hex(got) << ", want " << e8m0_hex(r.want);
  }
}

}  // namespace
}  // namespace mlacheck::quant
