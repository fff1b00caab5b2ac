#pragma once
// One KV cache in one of the three formats, as host spans over rows of the cache (row r = the
// latent + rope vector of one token slot; the batch layout maps keys to rows). The CPU reference
// reads these; GPU strategies get the same tensors on the device.
#include <cstdint>
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
};

}  // namespace mlacheck::problem
