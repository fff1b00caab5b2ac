#include "ref/kv_caches.h"

#include <algorithm>
#include <cstddef>

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"

namespace mlacheck::ref {
namespace {
// Rows converted to float32 per call of the MXFP4 quantizer: 9 MiB of floats, never a float copy
// of the whole cache.
constexpr int64_t kMxfp4ChunkRows = 4096;

// Calls each(first row, float32 values of kMxfp4ChunkRows rows or fewer) over the whole cache.
template <class Each>
void for_each_f32_chunk(std::span<const uint16_t> kv_bf16, Each&& each) {
  const int64_t rows = static_cast<int64_t>(kv_bf16.size()) / problem::kQkDim;
  std::vector<float> x;
  for (int64_t r0 = 0; r0 < rows; r0 += kMxfp4ChunkRows) {
    const int64_t n = std::min(kMxfp4ChunkRows, rows - r0);
    x.resize(static_cast<std::size_t>(n) * problem::kQkDim);
    const uint16_t* src = kv_bf16.data() + r0 * problem::kQkDim;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = quant::bf16_to_f32(src[i]);
    each(r0, n, std::span<const float>(x));
  }
}

void check_rows(const char* func, std::size_t values, std::size_t packed, std::size_t scales) {
  const std::size_t rows = values / problem::kQkDim;
  if (values % problem::kQkDim != 0 || packed != rows * problem::kMxfp4RowBytes ||
      scales != rows * problem::kMxfp4RowScales)
    throw problem::ProblemError(fmt::format(
        "{}: {} bf16 values, {} packed bytes, {} scales do not describe whole rows", func, values,
        packed, scales));
}

}  // namespace

void quantize_mxfp4_rows(std::span<const uint16_t> kv_bf16, quant::E2M1Rounding rounding,
                         std::span<uint8_t> packed, std::span<uint8_t> scales) {
  check_rows("quantize_mxfp4_rows", kv_bf16.size(), packed.size(), scales.size());
  for_each_f32_chunk(kv_bf16, [&](int64_t r0, int64_t n, std::span<const float> x) {
    quant::mxfp4_quantize(x, problem::kQkDim, rounding,
                          packed.subspan(r0 * problem::kMxfp4RowBytes, n * problem::kMxfp4RowBytes),
                          scales.subspan(r0 * problem::kMxfp4RowScales, n * problem::kMxfp4RowScales));
  });
}

void mxfp4_scale_rows(std::span<const uint16_t> kv_bf16, std::span<uint8_t> scales) {
  check_rows("mxfp4_scale_rows", kv_bf16.size(), kv_bf16.size() / 2, scales.size());
  for_each_f32_chunk(kv_bf16, [&](int64_t r0, int64_t n, std::span<const float> x) {
    quant::mxfp4_scales(x, problem::kQkDim,
                        scales.subspan(r0 * problem::kMxfp4RowScales, n * problem::kMxfp4RowScales));
  });
}

problem::KvCache on_read_cache(std::span<const uint16_t> kv_bf16, int64_t rows,
                               const problem::Recipe& recipe) {
  problem::KvCache c = KvCaches(kv_bf16, rows).bf16();  // checks the size
  c.format = recipe.kv;
  if (recipe.kv == problem::KvFormat::bf16) return c;
  problem::KvCache::QuantizeOnRead q;
  if (recipe.kv == problem::KvFormat::fp8) {
    q.fp8_scale = quant::fp8_harness_scale(kv_bf16, recipe.fp8);  // every row, as KvCaches::fp8
    c.fp8_scale = q.fp8_scale;
    c.fp8_format = recipe.fp8;
  }
  q.mxfp4_rounding = recipe.mxfp4_rounding;
  c.on_read = q;
  return c;
}

KvCaches::KvCaches(std::span<const uint16_t> kv_bf16, int64_t rows) : bf16_(kv_bf16), rows_(rows) {
  if (rows < 0 || kv_bf16.size() != static_cast<std::size_t>(rows) * problem::kQkDim)
    throw problem::ProblemError(fmt::format("kv cache has {} bf16 values; {} rows need {}",
                                            kv_bf16.size(), rows, rows * problem::kQkDim));
}

problem::KvCache KvCaches::bf16() const {
  problem::KvCache c;
  c.format = problem::KvFormat::bf16;
  c.rows = rows_;
  c.bf16 = bf16_;
  return c;
}

problem::KvCache KvCaches::fp8(quant::Fp8Format f) {
  Fp8& e = fp8_[static_cast<int>(f)];
  if (!e.built) {
    e.codes.resize(bf16_.size());
    e.scale = quant::fp8_harness_quantize(bf16_, f, e.codes);
    e.built = true;
  }
  problem::KvCache c;
  c.format = problem::KvFormat::fp8;
  c.rows = rows_;
  c.fp8 = e.codes;
  c.fp8_scale = e.scale;
  c.fp8_format = f;
  return c;
}

problem::KvCache KvCaches::mxfp4(quant::E2M1Rounding r) {
  Mxfp4& e = mxfp4_[static_cast<int>(r)];
  if (!e.built) {
    e.packed.resize(static_cast<std::size_t>(rows_) * problem::kMxfp4RowBytes);
    e.scales.resize(static_cast<std::size_t>(rows_) * problem::kMxfp4RowScales);
    quantize_mxfp4_rows(bf16_, r, e.packed, e.scales);
    e.built = true;
  }
  problem::KvCache c;
  c.format = problem::KvFormat::mxfp4;
  c.rows = rows_;
  c.mxfp4 = e.packed;
  c.mxfp4_scale = e.scales;
  return c;
}

problem::KvCache KvCaches::for_recipe(const problem::Recipe& recipe) {
  switch (recipe.kv) {
    case problem::KvFormat::bf16: return bf16();
    case problem::KvFormat::fp8: return fp8(recipe.fp8);
    case problem::KvFormat::mxfp4: return mxfp4(recipe.mxfp4_rounding);
  }
  return bf16();
}

}  // namespace mlacheck::ref
