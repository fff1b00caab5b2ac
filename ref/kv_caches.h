#pragma once
// The quantized KV caches the recipes read, built from the bf16 cache the way the harness builds
// kv_data["fp8"] and kv_data["mxfp4"] (NUMERICS §6.3), so callers do not repeat it.
#include <cstdint>
#include <span>
#include <vector>

#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "quant/formats.h"

namespace mlacheck::ref {

// aiter's dynamic_mxfp4_quant of every row of a bf16 cache ([rows, 576] bits) into packed
// ([rows, 288]) and scales ([rows, 18]), converting a few thousand rows at a time to float32:
// never a float copy of the whole cache.
void quantize_mxfp4_rows(std::span<const uint16_t> kv_bf16, quant::E2M1Rounding rounding,
                         std::span<uint8_t> packed, std::span<uint8_t> scales);

// The scales alone of quantize_mxfp4_rows (the E2M1 codes are not computed): [rows, 18].
void mxfp4_scale_rows(std::span<const uint16_t> kv_bf16, std::span<uint8_t> scales);

// The cache of `recipe`'s KV format quantized on read from kv_bf16 (problem/kv_cache.h on_read):
// the rows KvCaches::for_recipe would store, none of them held. kv_bf16 must outlive the result.
problem::KvCache on_read_cache(std::span<const uint16_t> kv_bf16, int64_t rows,
                               const problem::Recipe& recipe);

class KvCaches {
 public:
  // Keeps a view of kv_bf16 ([rows, 576] bf16 bits), which must outlive this object.
  KvCaches(std::span<const uint16_t> kv_bf16, int64_t rows);

  // The cache in `recipe`'s KV format, quantized on first use; the view stays valid while this
  // object lives. Not thread-safe (build caches before handing them to threads).
  problem::KvCache for_recipe(const problem::Recipe& recipe);

  problem::KvCache bf16() const;
  // The harness's quantize_fp8 of the whole cache: one per-tensor scale (NUMERICS §4).
  problem::KvCache fp8(quant::Fp8Format f);
  // aiter's dynamic_mxfp4_quant of each row: 288 packed bytes + 18 E8M0 scales (NUMERICS §5).
  problem::KvCache mxfp4(quant::E2M1Rounding r);

  int64_t rows() const { return rows_; }

 private:
  struct Fp8 {
    bool built = false;
    std::vector<uint8_t> codes;
    float scale = 0.0f;
  };
  struct Mxfp4 {
    bool built = false;
    std::vector<uint8_t> packed, scales;
  };
  std::span<const uint16_t> bf16_;
  int64_t rows_;
  Fp8 fp8_[2];      // by quant::Fp8Format
  Mxfp4 mxfp4_[2];  // by quant::E2M1Rounding
};

}  // namespace mlacheck::ref
