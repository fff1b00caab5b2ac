#include "ref/emulated_inputs.h"

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "ref/detmath.h"
#include "ref/round_to.h"

namespace mlacheck::ref {

using problem::KvFormat;
using problem::QFormat;

namespace {

// fl32(sm_scale) for base e, fl32(sm_scale · log2 e) for base 2 (emulated_inputs.h).
float softmax_scale(problem::SoftmaxBase base) {
  return base == problem::SoftmaxBase::e
             ? static_cast<float>(problem::kSmScale)
             : static_cast<float>(problem::kSmScale * detmath::detail::kLog2e);
}

}  // namespace

EmulatedQ quantize_q(std::span<const uint16_t> q_bf16, const problem::Recipe& recipe) {
  EmulatedQ q;
  q.values.resize(q_bf16.size());
  std::vector<float> x(q_bf16.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = quant::bf16_to_f32(q_bf16[i]);
  std::vector<uint8_t> codes(recipe.q == QFormat::bf16 || recipe.q == QFormat::mxfp4_dynamic ||
                                     recipe.q == QFormat::bf16_scaled
                                 ? 0
                                 : x.size());
  const auto decode_fp8 = [&] {
    for (std::size_t i = 0; i < codes.size(); ++i)
      q.values[i] = quant::fp8_to_f32(codes[i], recipe.fp8);
  };
  switch (recipe.q) {
    case QFormat::bf16:
      q.values = x;
      break;
    case QFormat::fp8_harness:  // NUMERICS §4, bf16 intermediates
      q.scale = quant::fp8_harness_quantize(q_bf16, recipe.fp8, codes);
      q.scaled = true;
      decode_fp8();
      break;
    case QFormat::fp8_dynamic:  // NUMERICS §4.1, one float32 scale over all rows
      q.scale = quant::fp8_dynamic_quantize(x, problem::kQkDim, recipe.fp8, codes);
      q.scaled = true;
      decode_fp8();
      break;
    case QFormat::fp8_static:
      q.scale = problem::static_q_scale(recipe);
      quant::fp8_static_quantize(x, q.scale, recipe.fp8, codes);
      q.scaled = true;
      decode_fp8();
      break;
    case QFormat::fp8_cast:  // scale 1: nothing to multiply
      quant::fp8_cast(x, recipe.fp8, recipe.q_cast_overflow, codes);
      decode_fp8();
      break;
    case QFormat::bf16_scaled: {  // fl32(q x scale), then bf16 (the score takes no scale)
      const float scale = softmax_scale(recipe.base);
      for (std::size_t i = 0; i < x.size(); ++i) q.values[i] = round_to_bf16(x[i] * scale);
      break;
    }
    case QFormat::mxfp4_dynamic: {  // per 32 elements of each head's row (seed 000)
      std::vector<uint8_t> packed(x.size() / 2), scales(x.size() / quant::kMxfp4BlockSize);
      quant::mxfp4_quantize(x, problem::kQkDim, recipe.mxfp4_rounding, packed, scales);
      quant::mxfp4_dequantize(packed, scales, problem::kQkDim, q.values);
      break;
    }
  }
  return q;
}

KvDecoder::KvDecoder(const problem::KvCache& cache, const problem::Recipe& recipe, KvExact exact)
    : cache_(cache),
      exact_(exact),
      scaled_(cache.format == KvFormat::fp8 && recipe.kv_scale == problem::KvScale::scores_output),
      p_(recipe.p),
      fp8_(recipe.fp8),
      round_v_(recipe.p == problem::PFormat::bf16 || recipe.p == problem::PFormat::f16) {
  const auto fp8_name = [](quant::Fp8Format f) {
    return f == quant::Fp8Format::e4m3fn ? "e4m3fn" : "e4m3fnuz";
  };
  if (cache.format != recipe.kv)
    throw problem::ProblemError(fmt::format("recipe {} reads a {} KV cache, got {}", recipe.name,
                                            problem::to_string(recipe.kv),
                                            problem::to_string(cache.format)));
  if (cache.format == KvFormat::fp8 && cache.fp8_format != recipe.fp8)
    throw problem::ProblemError(fmt::format("recipe {} reads fp8 {}, the cache holds {}",
                                            recipe.name, fp8_name(recipe.fp8),
                                            fp8_name(cache.fp8_format)));
  const bool have_bf16 =
      cache.bf16.size() == static_cast<std::size_t>(cache.rows) * problem::kQkDim;
  if ((exact.k || exact.v) && !have_bf16)
    throw problem::ProblemError("exact K / V asked for without the bf16 cache");
  if (cache.on_read && cache.format != KvFormat::bf16 && !have_bf16)
    throw problem::ProblemError("a cache quantized on read needs the bf16 cache it is read from");
  if (cache.on_read && cache.format == KvFormat::fp8)
    fp8_codes_ = quant::fp8_harness_code_table(cache.on_read->fp8_scale, cache.fp8_format);
  const auto v_of = [&](float k) { return round_v_ ? round_to(p_, fp8_, k) : k; };
  // kv-scale=fold-*: the dequantized element, scale included, rounded to bf16 / fp16 once.
  const auto fold = [&](float x) {
    switch (recipe.kv_scale) {
      case problem::KvScale::scores_output: return x;
      case problem::KvScale::fold_bf16: return round_to_bf16(x);
      case problem::KvScale::fold_f16: return round_to_f16(x);
    }
    return x;
  };
  if (cache.format == KvFormat::fp8) {
    fp8_k_.resize(256);
    fp8_v_.resize(256);
    for (int c = 0; c < 256; ++c) {
      const float code = quant::fp8_to_f32(static_cast<uint8_t>(c), cache.fp8_format);
      fp8_k_[c] = scaled_ ? code : fold(code * cache.fp8_scale);
      fp8_v_[c] = v_of(fp8_k_[c]);
    }
  }
  if (cache.format == KvFormat::mxfp4) {
    mx_k_.resize(256 * 16);
    mx_v_.resize(256 * 16);
    for (int s = 0; s < 256; ++s)
      for (int c = 0; c < 16; ++c) {  // the dequantized element, exact in float32 (NUMERICS §5.7)
        mx_k_[s * 16 + c] = fold(quant::e2m1_to_f32(static_cast<uint8_t>(c)) *
                                 quant::e8m0_to_f32(static_cast<uint8_t>(s)));
        mx_v_[s * 16 + c] = v_of(mx_k_[s * 16 + c]);
      }
  }
}

void KvDecoder::decode(int64_t r, int width, const float* fp8_table, const float* mxfp4_table,
                       bool round_row, bool from_bf16, float* out) const {
  switch (from_bf16 ? KvFormat::bf16 : cache_.format) {
    case KvFormat::bf16: {
      const uint16_t* src = cache_.bf16.data() + r * problem::kQkDim;
      for (int d = 0; d < width; ++d) out[d] = quant::bf16_to_f32(src[d]);
      if (round_row)  // only P = fp16 changes bf16 values (P = bf16 leaves them as they are)
        for (int d = 0; d < width; ++d) out[d] = round_to(p_, fp8_, out[d]);
      break;
    }
    case KvFormat::fp8: {
      if (cache_.on_read) {  // the code of each element by table: steps 4-6 see nothing else
        const uint16_t* src = cache_.bf16.data() + r * problem::kQkDim;
        for (int d = 0; d < width; ++d) out[d] = fp8_table[fp8_codes_[src[d]]];
        break;
      }
      const uint8_t* src = cache_.fp8.data() + r * problem::kQkDim;
      for (int d = 0; d < width; ++d) out[d] = fp8_table[src[d]];
      break;
    }
    case KvFormat::mxfp4: {
      uint8_t packed_row[problem::kMxfp4RowBytes], scales_row[problem::kMxfp4RowScales];
      // Quantized on read the MXFP4 vectors are empty: no pointer into them (UBSan: offset on null).
      const uint8_t* packed = packed_row;
      const uint8_t* scales = scales_row;
      if (!cache_.on_read) {
        packed = cache_.mxfp4.data() + r * problem::kMxfp4RowBytes;
        scales = cache_.mxfp4_scale.data() + r * problem::kMxfp4RowScales;
      } else {  // the row's first `width` elements are whole blocks (576, 512)
        float x[problem::kQkDim];
        const uint16_t* src = cache_.bf16.data() + r * problem::kQkDim;
        for (int d = 0; d < width; ++d) x[d] = quant::bf16_to_f32(src[d]);
        const auto n = static_cast<std::size_t>(width);
        quant::mxfp4_quantize_row(std::span<const float>(x, n), cache_.on_read->mxfp4_rounding,
                                  std::span(packed_row, n / 2),
                                  std::span(scales_row, n / quant::kMxfp4BlockSize));
      }
      for (int j = 0; j < width / 2; ++j) {  // low nibble = even element (NUMERICS §5.5)
        const float* t = mxfp4_table + scales[2 * j / problem::kMxfp4Block] * 16;
        out[2 * j] = t[packed[j] & 0x0F];
        out[2 * j + 1] = t[packed[j] >> 4];
      }
      break;
    }
  }
}

void KvDecoder::row(int64_t r, float* out) const {
  decode(r, problem::kQkDim, fp8_k_.data(), mx_k_.data(), false, exact_.k, out);
}

void KvDecoder::v_row(int64_t r, float* out) const {
  decode(r, problem::kVDim, fp8_v_.data(), mx_v_.data(), round_v_ && p_ == problem::PFormat::f16,
         exact_.v, out);
}

EmulatedScales emulated_scales(const problem::Recipe& recipe, const EmulatedQ& q,
                               const KvDecoder& kv) {
  EmulatedScales s{};
  s.score = recipe.q == QFormat::bf16_scaled ? 1.0f : softmax_scale(recipe.base);
  if (q.scaled) s.score *= q.scale;
  if (kv.k_scaled()) s.score *= kv.scale();
  s.out = kv.scale();
  s.out_scaled = kv.v_scaled();
  return s;
}

}  // namespace mlacheck::ref
