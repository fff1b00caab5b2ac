#pragma once
// Raw bytes as lowercase hex, the form the interop expectation files use (Python bytes.hex()).
#include <cstddef>
#include <span>
#include <string>

namespace mlacheck::io::testing {

inline std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (const std::byte b : bytes) {
    s += kDigits[std::to_integer<unsigned>(b) >> 4];
    s += kDigits[std::to_integer<unsigned>(b) & 0xF];
  }
  return s;
}

}  // namespace mlacheck::io::testing
