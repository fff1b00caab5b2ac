#pragma once
// Names of the codec options, for the command line and reports; host only. Each parse_* accepts
// exactly the string its to_string gives and returns nullopt for anything else.
#include <optional>
#include <string>
#include <string_view>

#include "quant/formats.h"

namespace mlacheck::quant {

inline std::string to_string(Fp8Format f) {
  return f == Fp8Format::e4m3fnuz ? "e4m3fnuz" : "e4m3fn";
}
inline std::string to_string(Overflow o) { return o == Overflow::saturate ? "saturate" : "nan"; }
inline std::string to_string(E2M1Rounding r) {
  return r == E2M1Rounding::ties_away ? "ties-away" : "rne";
}

inline std::optional<Fp8Format> parse_fp8_format(std::string_view s) {
  if (s == "e4m3fn") return Fp8Format::e4m3fn;
  if (s == "e4m3fnuz") return Fp8Format::e4m3fnuz;
  return std::nullopt;
}
inline std::optional<Overflow> parse_overflow(std::string_view s) {
  if (s == "nan") return Overflow::nan;
  if (s == "saturate") return Overflow::saturate;
  return std::nullopt;
}
inline std::optional<E2M1Rounding> parse_e2m1_rounding(std::string_view s) {
  if (s == "rne") return E2M1Rounding::rne;
  if (s == "ties-away") return E2M1Rounding::ties_away;
  return std::nullopt;
}

}  // namespace mlacheck::quant
