// Option names for the command line (quant/names.h): each to_string parses back to its value,
// and near misses are rejected rather than guessed.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "quant/names.h"

namespace mlacheck::quant {
namespace {

TEST(QuantNames, RoundTrip) {
  for (const auto f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz})
    EXPECT_EQ(parse_fp8_format(to_string(f)), f) << to_string(f);
  for (const auto o : {Overflow::nan, Overflow::saturate})
    EXPECT_EQ(parse_overflow(to_string(o)), o) << to_string(o);
  for (const auto r : {E2M1Rounding::rne, E2M1Rounding::ties_away})
    EXPECT_EQ(parse_e2m1_rounding(to_string(r)), r) << to_string(r);
}

TEST(QuantNames, SpellingsUsedByTheDocs) {
  EXPECT_EQ(to_string(Fp8Format::e4m3fnuz), "e4m3fnuz");
  EXPECT_EQ(to_string(E2M1Rounding::ties_away), "ties-away");
  EXPECT_EQ(to_string(Overflow::saturate), "saturate");
}

TEST(QuantNames, NearMissesAreRejected) {
  for (const char* s : {"", "E4M3FN", "e4m3", "e4m3fn ", "fp8"})
    EXPECT_EQ(parse_fp8_format(s), std::nullopt) << "'" << s << "'";
  for (const char* s : {"ties_away", "RNE", "even", "away"})
    EXPECT_EQ(parse_e2m1_rounding(s), std::nullopt) << "'" << s << "'";
  for (const char* s : {"NaN", "sat", "clamp"})
    EXPECT_EQ(parse_overflow(s), std::nullopt) << "'" << s << "'";
}

}  // namespace
}  // namespace mlacheck::quant
