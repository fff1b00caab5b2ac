#include "cli/quant_formats.h"

#include <array>

namespace mlacheck::cli {
namespace {

constexpr std::array kFormats{
    QuantFormat{QuantFormatId::bf16, "bf16", "f32 -> bf16, round to nearest even (NUMERICS §2.1); y BF16"},
    QuantFormat{QuantFormatId::e4m3fn, "e4m3fn",
                "plain cast to OCP fp8 e4m3fn, --fp8-overflow policy (§3.2); y F8_E4M3"},
    QuantFormat{QuantFormatId::e4m3fnuz, "e4m3fnuz",
                "plain cast to fp8 e4m3fnuz (gfx942), --fp8-overflow policy (§3.3); y U8"},
    QuantFormat{QuantFormatId::e8m0, "e8m0",
                "value -> E8M0 scale byte as torch's float8_e8m0fnu cast (§5.7); y F8_E8M0"},
    QuantFormat{QuantFormatId::fp8_harness_e4m3fn, "fp8-harness-e4m3fn",
                "the harness's per-tensor quantize_fp8, bf16 intermediates (§4); y F8_E4M3, scale F32[1]"},
    QuantFormat{QuantFormatId::fp8_harness_e4m3fnuz, "fp8-harness-e4m3fnuz",
                "quantize_fp8 with e4m3fnuz (gfx942) (§4); y U8, scale F32[1]"},
    QuantFormat{QuantFormatId::mxfp4, "mxfp4",
                "aiter dynamic_mxfp4_quant, block 32 (§5); y U8 packed [...,D/2], scale F8_E8M0 [...,D/32]"},
};

}  // namespace

std::span<const QuantFormat> quant_formats() { return kFormats; }

std::optional<QuantFormat> find_quant_format(std::string_view name) {
  for (const QuantFormat& f : kFormats)
    if (f.name == name) return f;
  return std::nullopt;
}

}  // namespace mlacheck::cli
