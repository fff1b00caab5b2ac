#pragma once
// The formats `mlacheck quant --format` accepts: one table, also printed by `mlacheck list`.
#include <optional>
#include <span>
#include <string_view>

namespace mlacheck::cli {

enum class QuantFormatId { bf16, e4m3fn, e4m3fnuz, e8m0, fp8_harness_e4m3fn, fp8_harness_e4m3fnuz, mxfp4 };

struct QuantFormat {
  QuantFormatId id;
  std::string_view name;
  std::string_view description;
};

std::span<const QuantFormat> quant_formats();
std::optional<QuantFormat> find_quant_format(std::string_view name);

}  // namespace mlacheck::cli
