#pragma once
// Failure messages for codec tests: every bit pattern printed in hex and split into sign, exponent
// and mantissa fields, with its value, so a wrong rounding is visible at a glance.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/formats.h"

namespace mlacheck::quant::testing {

std::string f32_hex(float x);                    // 0x3F800000 [s=0 e=0x7F m=0x000000] 1
std::string bf16_hex(uint16_t b);                // 0x3F80 [s=0 e=0x7F m=0x00] 1
std::string fp8_hex(uint8_t code, Fp8Format f);  // 0x7E [s=0 e=1111 m=110] 448
std::string e2m1_hex(uint8_t code);              // 0x7 [s=0 e=11 m=1] 6
std::string e8m0_hex(uint8_t b);                 // 0x7F [e=0x7F] 1

// Collects failure lines of a bulk comparison and keeps the first few, so an exhaustive test
// that fails everywhere prints a readable report instead of 65 536 lines.
class Mismatches {
 public:
  explicit Mismatches(std::size_t keep = 12) : keep_(keep) {}
  void add(std::string line);
  std::size_t count() const { return count_; }
  // "N mismatches; first ones:\n  ..." or "" when there are none.
  std::string report() const;

 private:
  std::size_t keep_;
  std::size_t count_ = 0;
  std::vector<std::string> lines_;
};

}  // namespace mlacheck::quant::testing
