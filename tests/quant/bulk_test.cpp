// Bulk quantizers (quant/bulk.h): argument checks, the documented choices where the GPU's
// behaviour is not established, and agreement with independent re-computations on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <algorithm>
#include <string>
#include <vector>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/bulk.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "tests/quant/hex_format.h"
#include "tests/quant/random_data.h"
#include "tests/quant/reference_codecs.h"

namespace mlacheck::quant {
namespace {

using testing::bf16_hex;
using testing::e2m1_hex;
using testing::f32_hex;
using testing::fp8_hex;
using testing::Mismatches;

constexpr Fp8Format kFormats[] = {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz};

// Expects fn() to throw std::invalid_argument whose message contains `needle`.
template <class Fn>
void expect_invalid(Fn fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(QuantBulkArguments, SizeMismatchesThrow) {
  std::vector<float> x(64, 1.0f);
  std::vector<uint16_t> xb(64, 0x3F80);
  std::vector<uint8_t> short_codes(63), packed(32), scales(2);
  std::vector<float> out(64);
  expect_invalid([&] { fp8_harness_quantize(xb, Fp8Format::e4m3fn, short_codes); }, "codes has 63");
  std::vector<uint8_t> codes(64);
  std::vector<uint16_t> short_y(10);
  expect_invalid([&] { fp8_harness_quantize(xb, Fp8Format::e4m3fn, codes, short_y); },
                 "y_bf16 has 10");
  expect_invalid([&] { fp8_dynamic_quantize(x, 64, Fp8Format::e4m3fn, short_codes); },
                 "expected 64");
  expect_invalid([&] { fp8_dynamic_quantize(x, 0, Fp8Format::e4m3fn, codes); },
                 "row_len must be > 0");
  expect_invalid([&] { fp8_dynamic_quantize(x, 48, Fp8Format::e4m3fn, codes); },
                 "whole number of rows");
  expect_invalid([&] { fp8_static_quantize(x, 1.0f, Fp8Format::e4m3fn, short_codes); },
                 "codes has 63");
  expect_invalid([&] { fp8_cast(x, Fp8Format::e4m3fn, Overflow::nan, short_codes); },
                 "codes has 63");
  expect_invalid([&] { mxfp4_quantize(x, 48, E2M1Rounding::rne, packed, scales); },
                 "not a multiple of 32");
  expect_invalid([&] { mxfp4_quantize(x, 64, E2M1Rounding::rne, short_codes, scales); },
                 "packed has 63");
  expect_invalid([&] { mxfp4_quantize(x, 64, E2M1Rounding::rne, packed, codes); }, "scales has 64");
  expect_invalid([&] { mxfp4_dequantize(packed, scales, 16, out); }, "not a multiple of 32");
  expect_invalid([&] { mxfp4_dequantize(short_codes, scales, 64, out); }, "packed has 63");
  // The correctly sized calls do not throw.
  EXPECT_NO_THROW(mxfp4_quantize(x, 64, E2M1Rounding::rne, packed, scales));
  EXPECT_NO_THROW(mxfp4_dequantize(packed, scales, 32, out));
}

TEST(QuantBulkArguments, StaticScaleMustBeFinitePositive) {
  std::vector<float> x(4, 1.0f);
  std::vector<uint8_t> codes(4);
  for (const float bad : {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()})
    expect_invalid([&] { fp8_static_quantize(x, bad, Fp8Format::e4m3fn, codes); },
                   "finite and > 0");
}

// ---- Harness quantize_fp8 (§4) ----

// bf16 RNE via frexp / nearbyint (default rounding mode: to nearest even), for expectations.
float ref_bf16_round(float v) {
  if (std::isnan(v) || std::isinf(v) || v == 0.0f) return v;
  int e = 0;
  const double m = std::frexp(static_cast<double>(v), &e);  // m in [0.5, 1)
  const int shift = e < -125 ? 8 - (-125 - e) : 8;          // bf16 subnormals keep fewer bits
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, shift)), e - shift));
}

// Every harness step re-computed with plain float arithmetic and the reference encoder.
TEST(QuantHarnessFp8, MatchesStepByStepRecomputation) {
  const auto x = testing::random_bf16_normal(16 * 576, 4220);
  int two_roundings_differ = 0;
  for (const auto f : kFormats) {
    std::vector<uint8_t> codes(x.size());
    const float scale = fp8_harness_quantize(x, f, codes);
    float amax = 0.0f;
    for (const uint16_t b : x) amax = std::fmax(amax, std::fabs(bf16_to_f32(b)));
    const float m = f == Fp8Format::e4m3fn ? 448.0f : 240.0f;
    const float want_scale = ref_bf16_round(amax * (1.0f / m));
    ASSERT_EQ(f32_bits(scale), f32_bits(want_scale))
        << f32_hex(scale) << " vs " << f32_hex(want_scale);
    EXPECT_EQ(f32_bits(scale) & 0xFFFFu, 0u) << "the scale is a bf16 value";
    Mismatches bad;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float xi = bf16_to_f32(x[i]);
      const float y = std::fmin(std::fmax(ref_bf16_round(xi / want_scale), -m), m);
      const uint8_t want = testing::ref_fp8_encode(y, f, Overflow::nan);
      if (codes[i] != want)
        bad.add(bf16_hex(x[i]) + ": got " + fp8_hex(codes[i], f) + ", want " + fp8_hex(want, f));
      if (want != testing::ref_fp8_encode(xi / want_scale, f, Overflow::nan))
        ++two_roundings_differ;
    }
    EXPECT_EQ(bad.count(), 0u) << bad.report();
  }
  // §4: the bf16 intermediate changes ~2 % of e4m3fn codes of such data (this seed's e4m3fnuz
  // scale, 1.40625 * 2^-12, happens to give none); without such elements this test could not
  // tell the two pipelines apart.
  EXPECT_GT(two_roundings_differ, static_cast<int>(x.size() / 100));
}

TEST(QuantHarnessFp8, AllZeroUsesTheFloor) {
  const std::vector<uint16_t> x = {0x0000, 0x8000, 0x0000, 0x8000};  // ±0
  std::vector<uint8_t> codes(x.size());
  // §4: s = bf16(bf16(1e-12) * fl32(1/M)) = 0x2721 (e4m3fn), 0x2796 (e4m3fnuz).
  EXPECT_EQ(f32_bits(fp8_harness_quantize(x, Fp8Format::e4m3fn, codes)), 0x27210000u);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x00, 0x80, 0x00, 0x80})) << "-0 stays -0 in e4m3fn";
  EXPECT_EQ(f32_bits(fp8_harness_quantize(x, Fp8Format::e4m3fnuz, codes)), 0x27960000u);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x00, 0x00, 0x00, 0x00})) << "e4m3fnuz has no -0";
}

TEST(QuantHarnessFp8, Amax448) {
  const std::vector<uint16_t> x = {0x43E0, 0xC3E0, 0x3F80};  // 448, -448, 1
  std::vector<uint8_t> codes(x.size());
  EXPECT_EQ(fp8_harness_quantize(x, Fp8Format::e4m3fn, codes), 1.0f);  // §4: s = 1.0
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x7E, 0xFE, 0x38}));
  // fnuz: s = bf16(448 * fl32(1/240)) = 0x3FEF = 1.8671875 (§4).
  EXPECT_EQ(f32_bits(fp8_harness_quantize(x, Fp8Format::e4m3fnuz, codes)), 0x3FEF0000u);
  EXPECT_EQ(codes[0], 0x7F) << "448 / 1.8671875 = 239.93 -> bf16 240 -> the max";
}

TEST(QuantHarnessFp8, NaNAndInf) {
  std::vector<uint8_t> codes(3);
  const std::vector<uint16_t> with_nan = {0x3F80, 0xFFC1, 0xBF80};  // a negative NaN payload
  EXPECT_TRUE(std::isnan(fp8_harness_quantize(with_nan, Fp8Format::e4m3fn, codes)));
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x7F, 0x7F, 0x7F})) << "bf16 NaN is 0x7FC0: no sign";
  fp8_harness_quantize(with_nan, Fp8Format::e4m3fnuz, codes);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x80, 0x80, 0x80}));
  const std::vector<uint16_t> with_inf = {0x3F80, 0x7F80, 0xBF80};
  EXPECT_TRUE(std::isinf(fp8_harness_quantize(with_inf, Fp8Format::e4m3fn, codes)));
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x00, 0x7F, 0x80})) << "x / Inf = ±0, Inf / Inf = NaN";
}

// Unread rows (issue 11 item 1): they take no part in the scale, whatever they hold, and are
// quantized as +0 — the same codes and scale as the whole-tensor rule on a zeroed copy.
TEST(QuantHarnessFp8, RowsReadOnlyMatchesAZeroedCopy) {
  constexpr std::size_t kRow = 576, kRows = 12;
  auto x = testing::random_bf16_normal(kRows * kRow, 4221);
  std::vector<bool> read(kRows, true);
  for (const std::size_t r : {0u, 5u, 11u}) {
    read[r] = false;
    for (std::size_t j = 0; j < kRow; ++j) x[r * kRow + j] = j % 3 == 0 ? 0x7FC0 : 0x4700;  // NaN, 32768
  }
  std::vector<uint16_t> zeroed = x;
  for (std::size_t r = 0; r < kRows; ++r)
    if (!read[r]) std::fill_n(zeroed.begin() + static_cast<std::ptrdiff_t>(r * kRow), kRow, uint16_t{0});
  for (const auto f : kFormats) {
    std::vector<uint8_t> got(x.size()), want(x.size());
    const float scale = fp8_harness_quantize_rows(x, kRow, read, f, got);
    const float want_scale = fp8_harness_quantize(zeroed, f, want);
    ASSERT_TRUE(std::isfinite(scale)) << "a NaN in an unread row reached the scale";
    EXPECT_EQ(f32_bits(scale), f32_bits(want_scale));
    EXPECT_EQ(got, want);
    // Control: the whole-tensor rule on the same data is poisoned, so the rows rule did something.
    EXPECT_TRUE(std::isnan(fp8_harness_quantize(x, f, want)));
  }
  std::vector<uint8_t> codes(x.size());
  expect_invalid([&] { fp8_harness_quantize_rows(x, kRow, std::vector<bool>(kRows - 1, true), kFormats[0], codes); },
                 "row_read");
}

// The two steps a derived cache is quantized in (scale once, then any rows by table) give the
// codes of one call, on every bf16 pattern (one tensor of all 65536 but the NaNs, which would make
// the scale NaN: then every code is NaN, also by table) and on rows with some not read.
TEST(QuantHarnessFp8, ScaleThenTableGivesTheSameCodes) {
  std::vector<uint16_t> every;
  for (uint32_t b = 0; b < kBf16Patterns; ++b)
    if ((b & 0x7FFF) <= 0x7F80) every.push_back(static_cast<uint16_t>(b));  // Inf included
  for (const auto f : kFormats) {
    std::vector<uint8_t> codes(every.size());
    const float scale = fp8_harness_quantize(every, f, codes);
    EXPECT_EQ(f32_bits(fp8_harness_scale(every, f)), f32_bits(scale));
    const std::vector<uint8_t> table = fp8_harness_code_table(scale, f);
    ASSERT_EQ(table.size(), kBf16Patterns);
    Mismatches bad;
    for (std::size_t i = 0; i < every.size(); ++i)
      if (table[every[i]] != codes[i])
        bad.add(bf16_hex(every[i]) + ": table " + fp8_hex(table[every[i]], f) + ", one call " + fp8_hex(codes[i], f));
    EXPECT_EQ(bad.count(), 0u) << bad.report();

    constexpr std::size_t kRow = 576, kRows = 9;
    auto x = testing::random_bf16_normal(kRows * kRow, 99);
    std::vector<bool> read(kRows, true);
    read[2] = read[7] = false;
    std::fill_n(x.begin() + 2 * kRow, kRow, uint16_t{0x7FC0});  // NaN where nothing reads
    std::vector<uint8_t> want(x.size());
    const float rows_scale = fp8_harness_quantize_rows(x, kRow, read, f, want);
    EXPECT_EQ(f32_bits(fp8_harness_scale_rows(x, kRow, read, f)), f32_bits(rows_scale));
    const std::vector<uint8_t> t = fp8_harness_code_table(rows_scale, f);
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(read[i / kRow] ? t[x[i]] : t[0], want[i]) << "element " << i;
    const std::vector<uint16_t> nan{0x3F80, 0x7FC0};
    std::vector<uint8_t> nan_codes(2);
    const float nan_scale = fp8_harness_quantize(nan, f, nan_codes);
    EXPECT_EQ(fp8_harness_code_table(nan_scale, f)[0x3F80], nan_codes[0]);
  }
  expect_invalid([] { fp8_harness_scale_rows(std::vector<uint16_t>(10), 5, std::vector<bool>(3), kFormats[0]); },
                 "row_read");
}

// ---- aiter per-tensor FP8 (§4.1) ----

TEST(QuantDynamicFp8, MatchesRecomputationOnRandomRows) {
  constexpr std::size_t kRows = 8, kRowLen = 576;
  const auto xb = testing::random_bf16_normal(kRows * kRowLen, 1357);
  std::vector<float> x(kRows * kRowLen);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = bf16_to_f32(xb[i]);
  x[3 * kRowLen + 7] = 0.5f;  // row 3 holds the tensor max
  for (const auto f : kFormats) {
    std::vector<uint8_t> codes(x.size());
    const float scale = fp8_dynamic_quantize(x, 576, f, codes);
    const float m = f == Fp8Format::e4m3fn ? 448.0f : 240.0f;
    ASSERT_EQ(f32_bits(scale), f32_bits(0.5f * (1.0f / m))) << "max over rows of fl32(rowmax / M)";
    const float inv = 1.0f / scale;
    Mismatches bad;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float t = std::fmin(std::fmax(x[i] * inv, -m), m);  // one rounding, then the clamp
      const uint8_t want = testing::ref_fp8_encode(t, f, Overflow::nan);
      if (codes[i] != want)
        bad.add(f32_hex(x[i]) + ": got " + fp8_hex(codes[i], f) + ", want " + fp8_hex(want, f));
    }
    EXPECT_EQ(bad.count(), 0u) << bad.report();
    EXPECT_EQ(codes[3 * 576 + 7], f == Fp8Format::e4m3fn ? 0x7E : 0x7F) << "the max maps to M";
  }
}

// The documented choice (bulk.h): all-zero input gives scale 0 and signed-zero codes, not the
// NaNs of 0 * (1/0).
TEST(QuantDynamicFp8, AllZeroGivesScaleZeroAndZeroCodes) {
  const std::vector<float> x = {0.0f, -0.0f, 0.0f, -0.0f};
  std::vector<uint8_t> codes(x.size(), 0xAA);
  EXPECT_EQ(f32_bits(fp8_dynamic_quantize(x, 2, Fp8Format::e4m3fn, codes)), 0u);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x00, 0x80, 0x00, 0x80}));
  EXPECT_EQ(f32_bits(fp8_dynamic_quantize(x, 4, Fp8Format::e4m3fnuz, codes)), 0u);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x00, 0x00, 0x00, 0x00}));
}

TEST(QuantDynamicFp8, NaNIgnoredByTheScaleInfTakesIt) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<uint8_t> codes(4);
  const std::vector<float> with_nan = {1.0f, nan, -2.0f, 0.5f};
  EXPECT_EQ(fp8_dynamic_quantize(with_nan, 4, Fp8Format::e4m3fn, codes), 2.0f * (1.0f / 448.0f));
  EXPECT_EQ(codes[1], 0x7F) << "the NaN element is a NaN code";
  EXPECT_EQ(codes[2], 0xFE) << "the max element is -M";
  const std::vector<float> with_inf = {1.0f, inf, -2.0f, 0.5f};
  EXPECT_TRUE(std::isinf(fp8_dynamic_quantize(with_inf, 4, Fp8Format::e4m3fn, codes)));
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x00, 0x7F, 0x80, 0x00})) << "inv = 0: ±0, Inf * 0 = NaN";
}

TEST(QuantStaticFp8, ClampsBeforeTheCast) {
  const std::vector<float> x = {1.0f, 1000.0f, -1e30f, 3.0f};
  std::vector<uint8_t> codes(x.size());
  fp8_static_quantize(x, 2.0f, Fp8Format::e4m3fn, codes);
  // 1000 / 2 = 500 would be NaN in a plain cast; the aiter kernel clamps to ±M first (§4.1).
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x30, 0x7E, 0xFE, 0x3C}));
  fp8_cast(x, Fp8Format::e4m3fn, Overflow::nan, codes);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x38, 0x7F, 0xFF, 0x44})) << "the cast does not clamp";
  fp8_cast(x, Fp8Format::e4m3fn, Overflow::saturate, codes);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x38, 0x7E, 0xFE, 0x44}));
}

// ---- MXFP4 (§5) ----

// An independent block quantizer: frexp exponent, double arithmetic, the reference E2M1 search.
// Elements whose qx is NaN are left to QuantMxfp4.NaNAndFlushCorners below (set to 0xFF here and
// skipped).
void ref_mxfp4(const std::vector<float>& x, E2M1Rounding r, std::vector<uint8_t>& codes,
               std::vector<uint8_t>& scales) {
  for (std::size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0.0f;
    for (std::size_t j = 0; j < 32; ++j)
      if (!std::isnan(x[b * 32 + j])) amax = std::fmax(amax, std::fabs(x[b * 32 + j]));
    const int e = testing::ref_block_exponent(amax);
    scales[b] = static_cast<uint8_t>(e + 127);
    for (std::size_t j = 0; j < 32; ++j) {
      const float v = x[b * 32 + j];
      const bool nan_qx = std::isnan(v) || (e == 127 && std::isinf(v));
      // e = 127: the multiplier is flushed to 0 (NVIDIA, bulk.h), so finite elements give ±0.
      const auto qx = e == 127 ? std::copysign(0.0f, v)
                               : static_cast<float>(static_cast<double>(v) * std::ldexp(1.0, -e));
      codes[b * 32 + j] = nan_qx ? 0xFF : testing::ref_e2m1_encode(qx, r);
    }
  }
}

TEST(QuantMxfp4, MatchesIndependentBlockQuantizerOnHostileData) {
  const auto x = testing::random_hostile_floats(32 * 4096, 77);
  for (const auto r : {E2M1Rounding::rne, E2M1Rounding::ties_away}) {
    std::vector<uint8_t> packed(x.size() / 2), scales(x.size() / 32);
    mxfp4_quantize(x, 32 * 8, r, packed, scales);
    std::vector<uint8_t> want_codes(x.size()), want_scales(x.size() / 32);
    ref_mxfp4(x, r, want_codes, want_scales);
    Mismatches bad;
    int ties = 0;
    for (std::size_t b = 0; b < scales.size(); ++b)
      if (scales[b] != want_scales[b])
        bad.add("block " + std::to_string(b) + ": scale " + std::to_string(scales[b]) + ", want " +
                std::to_string(want_scales[b]));
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto got = static_cast<uint8_t>((packed[i / 2] >> (4 * (i % 2))) & 0xF);
      if (want_codes[i] == 0xFF) continue;  // NaN qx: QuantMxfp4.NaNAndFlushCorners
      if (got != want_codes[i])
        bad.add(f32_hex(x[i]) + " (scale " + std::to_string(scales[i / 32]) + "): got " +
                e2m1_hex(got) + ", want " + e2m1_hex(want_codes[i]));
      const double q = std::fabs(static_cast<double>(x[i])) * std::ldexp(1.0, 127 - scales[i / 32]);
      ties += q == 0.25 || q == 1.25 || q == 2.5 || q == 5.0;
    }
    EXPECT_EQ(bad.count(), 0u) << bad.report();
    EXPECT_GT(ties, 100) << "the data must hold ties where the two rules differ";
  }
}

// One row at a time (the emulation's quantize-on-read) and the scales alone (the writer's) are the
// bytes of the bulk call, on hostile data.
TEST(QuantMxfp4, OneRowAndScalesAloneMatchTheBulkCall) {
  constexpr std::size_t kRow = 576;
  const auto x = testing::random_hostile_floats(kRow * 64, 78);
  for (const auto r : {E2M1Rounding::rne, E2M1Rounding::ties_away}) {
    std::vector<uint8_t> packed(x.size() / 2), scales(x.size() / 32);
    mxfp4_quantize(x, kRow, r, packed, scales);
    std::vector<uint8_t> row_packed(packed.size()), row_scales(scales.size()), scales_alone(scales.size());
    for (std::size_t row = 0; row < x.size() / kRow; ++row)
      mxfp4_quantize_row(std::span(x).subspan(row * kRow, kRow), r,
                         std::span(row_packed).subspan(row * kRow / 2, kRow / 2),
                         std::span(row_scales).subspan(row * kRow / 32, kRow / 32));
    mxfp4_scales(x, kRow, scales_alone);
    EXPECT_EQ(row_packed, packed);
    EXPECT_EQ(row_scales, scales);
    EXPECT_EQ(scales_alone, scales);
  }
  std::vector<uint8_t> small(1);
  expect_invalid([&] { mxfp4_quantize_row(std::span(x).first(64), E2M1Rounding::rne, small, small); }, "packed");
  expect_invalid([&] { mxfp4_scales(std::span(x).first(64), 32, small); }, "scales");
}

TEST(QuantMxfp4, NaNAndFlushCorners) {
  std::vector<float> x(64, 1.0f);
  x[0] = f32_from_bits(0x7F800001u);   // block 0: signalling NaN, quieted to 0x7FC00001
  x[1] = f32_from_bits(0xFFC00000u);   // negative quiet NaN
  x[32] = f32_from_bits(0x7F7F0000u);  // block 1: bf16 max: e = 127, multiplier flushed
  x[33] = f32_from_bits(0x7F800000u);  // +Inf * 0 = AMD default NaN 0x7FC00000
  x[34] = -1.0f;                       // finite: -0
  std::vector<uint8_t> packed(32), scales(2);
  mxfp4_quantize(x, 32, E2M1Rounding::rne, packed, scales);
  EXPECT_EQ(scales[0], 127 - 2) << "NaNs ignored: amax 1.0, e = -2";
  EXPECT_EQ(scales[1], 254) << "e = 127";
  auto code = [&](std::size_t i) { return (packed[i / 2] >> (4 * (i % 2))) & 0xF; };
  EXPECT_EQ(code(0), 0x3)
      << "0x7FC00001: quieted payload -> 1.5 (unquieted 0x7F800001 would be 1.0)";
  EXPECT_EQ(code(1), 0xB) << "negative NaN keeps its sign";
  EXPECT_EQ(code(2), 0x6) << "1.0 * 4 = 4.0";
  EXPECT_EQ(code(32), 0x0) << "flushed multiplier: +0";
  EXPECT_EQ(code(33), 0x3) << "Inf * 0 = 0x7FC00000 -> 1.5";
  EXPECT_EQ(code(34), 0x8) << "flushed multiplier: -0";
  mxfp4_quantize(x, 32, E2M1Rounding::ties_away, packed, scales);
  EXPECT_EQ(code(0), 0x7) << "old rule: every NaN is 6.0";
  EXPECT_EQ(code(1), 0xF);
  EXPECT_EQ(code(33), 0x7);
}

TEST(QuantMxfp4, AllNaNBlockHasExponentMinus127) {
  std::vector<float> x(32, std::numeric_limits<float>::quiet_NaN());
  std::vector<uint8_t> packed(16), scales(1);
  mxfp4_quantize(x, 32, E2M1Rounding::rne, packed, scales);
  EXPECT_EQ(scales[0], 0x00) << "amax starts at 0 and ignores NaN (bulk.h)";
  EXPECT_EQ(packed[0], 0x33) << "0x7FC00000 -> 1.5 in both nibbles";
}

TEST(QuantMxfp4, DequantizeUnderTheTopScaleBytes) {
  std::vector<uint8_t> packed(16), scales = {0xFF};
  for (std::size_t j = 0; j < 16; ++j) packed[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  std::vector<float> out(32);
  mxfp4_dequantize(packed, scales, 32, out);
  for (const float v : out)
    EXPECT_EQ(f32_bits(v), 0x7FC00001u) << "scale 0xFF is NaN: even 0 * NaN";
  scales = {0xFE};
  mxfp4_dequantize(packed, scales, 32, out);
  EXPECT_EQ(out[2], 0.5f * 0x1p127f) << "code 1 (0.5) times 2^127";
  EXPECT_TRUE(std::isinf(out[14])) << "code 7 (6.0) times 2^127 overflows float32";
  scales = {0x00};
  mxfp4_dequantize(packed, scales, 32, out);
  EXPECT_EQ(f32_bits(out[2]), 0x00200000u) << "0.5 * 2^-127 = 2^-128, a float32 subnormal";
}

}  // namespace
}  // namespace mlacheck::quant
