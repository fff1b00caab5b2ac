#pragma once
// Validators shared by the commands' options.
#include <cctype>
#include <string>

#include <CLI/CLI.hpp>

namespace mlacheck::cli {

// For options stored in unsigned integers: CLI11 converts "-1" to 2^64 - 1 and skips leading
// spaces, so `--seed -1` silently meant seed 18446744073709551615. Only decimal digits pass.
inline CLI::Validator unsigned_digits() {
  return CLI::Validator(
      [](const std::string& value) -> std::string {
        if (value.empty()) return "an unsigned decimal integer is needed, got nothing";
        for (const char ch : value)
          if (!std::isdigit(static_cast<unsigned char>(ch)))
            return "'" + value + "' is not an unsigned decimal integer (digits 0-9 only)";
        return {};
      },
      "UINT");
}

}  // namespace mlacheck::cli
