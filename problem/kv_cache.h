#pragma once
// One KV cache in one of the three formats, as host spans over rows of the cache (row r = the
// latent + rope vector of one token slot; the batch layout maps keys to rows). The CPU reference
// reads these; GPU strategies get the same tensors on the device.
#include <cstdint>
#include <optional>
#include <span>

#include "problem/recipe.h"
#include "quant/formats.h"

namespace mlacheck::problem {

struct KvCache {
  KvFormat format = KvFormat::bf16;
  int64_t rows = 0;
  std::span<const uint16_t> bf16;         // [rows, 576] bf16 bits           (format bf16)
  std::span<const uint8_t> fp8;           // [rows, 576] fp8 codes           (format fp8)
  float fp8_scale = 1.0f;                 // per-tensor scale: value = decode(code) * scale
  quant::Fp8Format fp8_format = quant::Fp8Format::e4m3fn;
  std::span<const uint8_t> mxfp4;         // [rows, 288] E2M1 pairs, low nibble = even element
  std::span<const uint8_t> mxfp4_scale;   // [rows, 18] E8M0 bytes, one per 32 elements

  // Set: the fp8 or mxfp4 rows are not stored (those spans are empty) but quantized from `bf16`
  // when read, the bytes the bulk quantizers give each row (quant/bulk.h): the harness's FP8 at
  // this scale (fp8_harness_code_table; fp8_scale stays what multiplies, as for stored codes) or
  // aiter's MXFP4 with this rounding. How the CPU reference reads a cache derived from the bf16
  // one without holding it (issue 11 item 6); GPU strategies need stored rows.
  struct QuantizeOnRead {
    float fp8_scale = 1.0f;
    quant::E2M1Rounding mxfp4_rounding = quant::E2M1Rounding::rne;
  };
  std::optional<QuantizeOnRead> on_read;
};

}  // namespace mlacheck::problem
