// Exhaustive FP8 tests (both variants, both overflow policies): every code round-trips, every
// bf16 input agrees with an independent nearest-value search, and every adjacent pair of codes is
// probed at its midpoint and one float32 ulp either side.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/fp8.h"
#include "tests/quant/hex_format.h"
#include "tests/quant/reference_codecs.h"

namespace mlacheck::quant {
namespace {

using testing::f32_hex;
using testing::fp8_hex;
using testing::Mismatches;

struct Variant {
  Fp8Format format;
  Overflow overflow;
};

std::string name_of(Variant v) {
  return std::string(v.format == Fp8Format::e4m3fn ? "e4m3fn" : "e4m3fnuz") +
         (v.overflow == Overflow::nan ? "_nan" : "_saturate");
}

class QuantFp8Exhaustive : public ::testing::TestWithParam<Variant> {};

bool is_nan_code(uint8_t c, Fp8Format f) {
  return f == Fp8Format::e4m3fnuz ? c == 0x80 : (c & 0x7F) == 0x7F;
}

// Every code decodes to the textbook value and encodes back to itself; NaN codes decode to a NaN
// and encode to the variant's NaN (e4m3fn keeps the sign, e4m3fnuz has the one 0x80).
TEST_P(QuantFp8Exhaustive, EveryCodeRoundTrips) {
  const auto [f, o] = GetParam();
  Mismatches bad;
  for (unsigned c = 0; c < 256; ++c) {
    const auto code = static_cast<uint8_t>(c);
    const float v = fp8_to_f32(code, f);
    const double want = testing::ref_fp8_value(code, f);
    if (is_nan_code(code, f)) {
      const uint8_t want_nan = f == Fp8Format::e4m3fnuz ? 0x80 : code;
      if (!std::isnan(v) || f32_to_fp8(v, f, o) != want_nan)
        bad.add(fp8_hex(code, f) + " decodes to " + f32_hex(v) + ", re-encodes to " +
                fp8_hex(f32_to_fp8(v, f, o), f));
      continue;
    }
    if (static_cast<double>(v) != want || std::signbit(v) != std::signbit(want))
      bad.add(fp8_hex(code, f) + " decodes to " + f32_hex(v));
    if (f32_to_fp8(v, f, o) != code)
      bad.add(fp8_hex(code, f) + " re-encodes to " + fp8_hex(f32_to_fp8(v, f, o), f));
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

// All 65 536 bf16 patterns (the harness's input type), against the nearest-value search.
TEST_P(QuantFp8Exhaustive, EveryBf16InputMatchesNearestSearch) {
  const auto [f, o] = GetParam();
  Mismatches bad;
  for (unsigned b = 0; b < 65536; ++b) {
    const float x = bf16_to_f32(static_cast<uint16_t>(b));
    const uint8_t got = f32_to_fp8(x, f, o);
    const uint8_t want = testing::ref_fp8_encode(x, f, o);
    if (got != want)
      bad.add(f32_hex(x) + ": got " + fp8_hex(got, f) + ", want " + fp8_hex(want, f));
  }
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

// For each pair of adjacent finite values lo < hi (and for the max and the first value past it),
// the midpoint goes to the one with the even mantissa, and one float32 ulp below / above it goes
// to lo / hi. Both signs. Expectations come from the pair itself, not from the search.
TEST_P(QuantFp8Exhaustive, AdjacentPairsAtMidpointAndOneUlpEitherSide) {
  const auto [f, o] = GetParam();
  const bool fnuz = f == Fp8Format::e4m3fnuz;
  const unsigned max_mag = fnuz ? 0x7F : 0x7E;
  Mismatches bad;
  int probes = 0;
  for (unsigned lo = 0; lo <= max_mag; ++lo) {
    const unsigned hi = lo + 1;  // hi == max_mag + 1 is the overflow sentinel (480 / 256)
    const double lo_v = testing::ref_fp8_value(static_cast<uint8_t>(lo), f);
    const double hi_v = hi <= max_mag ? testing::ref_fp8_value(static_cast<uint8_t>(hi), f)
                                      : (fnuz ? 256.0 : 480.0);
    const auto mid = static_cast<float>((lo_v + hi_v) / 2);  // <= 5 significant bits: exact
    const float below = std::nextafter(mid, 0.0f);
    const float above = std::nextafter(mid, 1e30f);
    const unsigned even = (lo & 1u) == 0 ? lo : hi;
    for (const bool neg : {false, true}) {
      const uint8_t s = neg ? 0x80 : 0x00;
      auto want_for = [&](unsigned mag) -> uint8_t {
        if (mag > max_mag)  // rounded past the max
          return o == Overflow::saturate ? static_cast<uint8_t>(max_mag | s)
                                         : (fnuz ? 0x80 : static_cast<uint8_t>(0x7F | s));
        if (mag == 0 && fnuz) return 0x00;
        return static_cast<uint8_t>(mag | s);
      };
      const struct {
        float x;
        unsigned mag;
        const char* what;
      } probes_here[] = {{mid, even, "midpoint"},
                         {below, lo, "midpoint - 1 ulp"},
                         {above, hi, "midpoint + 1 ulp"}};
      for (const auto& p : probes_here) {
        const float x = neg ? -p.x : p.x;
        const uint8_t got = f32_to_fp8(x, f, o);
        const uint8_t want = want_for(p.mag);
        ++probes;
        if (got != want)
          bad.add(std::string(p.what) + " of " + fp8_hex(static_cast<uint8_t>(lo), f) +
                  " and next: " + f32_hex(x) + " -> " + fp8_hex(got, f) + ", want " +
                  fp8_hex(want, f));
      }
    }
  }
  EXPECT_EQ(probes, static_cast<int>((max_mag + 1) * 6));
  EXPECT_EQ(bad.count(), 0u) << bad.report();
}

INSTANTIATE_TEST_SUITE_P(QuantAllVariants, QuantFp8Exhaustive,
                         ::testing::Values(Variant{Fp8Format::e4m3fn, Overflow::nan},
                                           Variant{Fp8Format::e4m3fn, Overflow::saturate},
                                           Variant{Fp8Format::e4m3fnuz, Overflow::nan},
                                           Variant{Fp8Format::e4m3fnuz, Overflow::saturate}),
                         [](const auto& test_info) { return name_of(test_info.param); });

// The reference search itself must not be vacuous: spot values from NUMERICS §3.2/§3.3.
TEST(QuantFp8Reference, AgreesWithSpecExamples) {
  using testing::ref_fp8_encode;
  EXPECT_EQ(ref_fp8_encode(464.0f, Fp8Format::e4m3fn, Overflow::nan), 0x7E);    // tie -> even 448
  EXPECT_EQ(ref_fp8_encode(464.5f, Fp8Format::e4m3fn, Overflow::nan), 0x7F);    // past: NaN
  EXPECT_EQ(ref_fp8_encode(248.0f, Fp8Format::e4m3fnuz, Overflow::nan), 0x80);  // tie -> NaN
  EXPECT_EQ(ref_fp8_encode(-1e-9f, Fp8Format::e4m3fnuz, Overflow::nan), 0x00);  // no -0
  EXPECT_EQ(ref_fp8_encode(-1e-9f, Fp8Format::e4m3fn, Overflow::nan), 0x80);    // -0 kept
}

}  // namespace
}  // namespace mlacheck::quant
