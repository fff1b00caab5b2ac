#include "tests/quant/hex_format.h"

#include <cstdio>
#include <string>
#include <utility>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"

namespace mlacheck::quant::testing {
namespace {

std::string binary(unsigned v, int width) {
  std::string s;
  for (int i = width - 1; i >= 0; --i) s += ((v >> i) & 1u) != 0 ? '1' : '0';
  return s;
}

std::string value(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

}  // namespace

std::string f32_hex(float x) {
  const uint32_t u = f32_bits(x);
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%08X [s=%u e=0x%02X m=0x%06X] ", u, u >> 31, (u >> 23) & 0xFFu,
                u & 0x7FFFFFu);
  return buf + value(x);
}

std::string bf16_hex(uint16_t b) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%04X [s=%u e=0x%02X m=0x%02X] ", b, b >> 15u, (b >> 7) & 0xFFu,
                b & 0x7Fu);
  return buf + value(bf16_to_f32(b));
}

std::string fp8_hex(uint8_t code, Fp8Format f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02X", code);
  return std::string(buf) + " [s=" + binary(code >> 7, 1) + " e=" + binary((code >> 3) & 0xFu, 4) +
         " m=" + binary(code & 0x7u, 3) + "] " + value(fp8_to_f32(code, f));
}

std::string e2m1_hex(uint8_t code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", code & 0xFu);
  return std::string(buf) + " [s=" + binary((code >> 3) & 1u, 1) +
         " e=" + binary((code >> 1) & 0x3u, 2) + " m=" + binary(code & 1u, 1) + "] " +
         value(e2m1_to_f32(code));
}

std::string e8m0_hex(uint8_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%02X [e=0x%02X] ", b, b);
  return buf + value(e8m0_to_f32(b));
}

void Mismatches::add(std::string line) {
  ++count_;
  if (lines_.size() < keep_) lines_.push_back(std::move(line));
}

std::string Mismatches::report() const {
  if (count_ == 0) return {};
  std::string s = std::to_string(count_) + " mismatches; first ones:\n";
  for (const auto& l : lines_) s += "  " + l + "\n";
  return s;
}

}  // namespace mlacheck::quant::testing
