#pragma once
// What a recipe feeds into Q·Kᵀ and P·V (DESIGN.md "Strategy = recipe x schedule"): the quantized
// Q, the KV cache decoded row by row, and the float32 factors that carry the tensor scales.
//
// Tensor scales never multiply elements by default: Q's per-tensor fp8 scale and the KV cache's
// fp8 scale multiply the score, and the KV scale multiplies the output (aiter's golden model,
// NUMERICS §6.2). MXFP4 block scales do multiply their 32 elements (the dequantized E2M1 value,
// exact in float32), as in tl.dot_scaled and the seeds' V dequantization. A recipe with
// kv-scale=fold-bf16 / fold-f16 (problem/recipe.h KvScale) instead rounds every dequantized
// element, scale included, to that format once, and no KV scale is left for scores or output.
#include <cstdint>
#include <span>
#include <vector>

#include "problem/kv_cache.h"
#include "problem/recipe.h"

namespace mlacheck::ref {

// Q as the recipe quantizes it, over the whole [total_q, 16, 576] tensor at once (the per-tensor
// quantizers see every request, as the harness's quantize_fp8(q) does).
struct EmulatedQ {
  std::vector<float> values;  // the element values entering Q·Kᵀ (fp8 / E2M1·2^e decoded, exact)
  float scale = 1.0f;         // per-tensor scale that multiplies the score
  bool scaled = false;        // whether `scale` applies (fp8 harness / dynamic / static)
};
EmulatedQ quantize_q(std::span<const uint16_t> q_bf16, const problem::Recipe& recipe);

// Decodes rows of one KV cache to float32 element values (scale excluded for fp8), by tables
// built once from the quant/ codecs: 256 fp8 values, or 256 scale bytes x 16 E2M1 codes.
// Which side of the KV cache is read exactly from the bf16 cache instead of the quantized one
// (drift's waterfall: ref/decode_emulated.h EmulationOptions).
struct KvExact {
  bool k = false, v = false;
};

class KvDecoder {
 public:
  // Throws problem::ProblemError if the cache's format or fp8 variant differs from the recipe's,
  // or an exact side or quantizing on read (problem/kv_cache.h) is asked for without the bf16
  // cache.
  KvDecoder(const problem::KvCache& cache, const problem::Recipe& recipe, KvExact exact = {});
  // K: the 576 values of cache row r.
  void row(int64_t r, float* out) const;
  // V of row r as P·V takes it: the first 512 values in the P·V operand type (problem/recipe.h,
  // PFormat): rounded to bf16 or fp16 when P is one of those, unchanged otherwise.
  void v_row(int64_t r, float* out) const;
  // Whether the fp8 KV scale still multiplies the score (K) and the output (V).
  bool k_scaled() const { return scaled_ && !exact_.k; }
  bool v_scaled() const { return scaled_ && !exact_.v; }
  float scale() const { return cache_.fp8_scale; }

 private:
  void decode(int64_t r, int width, const float* fp8_table, const float* mxfp4_table,
              bool round_row, bool from_bf16, float* out) const;

  problem::KvCache cache_;
  KvExact exact_;
  bool scaled_;  // an fp8 cache whose scale is not folded into the elements
  problem::PFormat p_;
  quant::Fp8Format fp8_;
  bool round_v_;                       // V needs rounding to the P format
  std::vector<float> fp8_k_, fp8_v_;   // [256] by code
  std::vector<float> mx_k_, mx_v_;     // [256 scale bytes x 16 codes]
  std::vector<uint8_t> fp8_codes_;     // quantized on read: the fp8 code of each bf16 pattern
};

// The float32 factors of one recipe on one input.
struct EmulatedScales {
  // s = fl32(Σ q·k · score): fl32(sm_scale) for base e, fl32(sm_scale · log2 e) for base 2 (seed
  // 000 passes the Python double SM_SCALE * LOG2E as a float), then times the Q scale and the KV
  // scale in that order, one float32 rounding each (aiter's golden model: scale *= q_scale;
  // scale *= kv_scale).
  float score;
  float out;       // KV scale: out = fl32(fl32(acc / l) · out)
  bool out_scaled;
};
EmulatedScales emulated_scales(const problem::Recipe& recipe, const EmulatedQ& q,
                               const KvDecoder& kv);

}  // namespace mlacheck::ref
