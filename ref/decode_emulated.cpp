#include "ref/decode_emulated.h"

#include <algorithm>
#include <limits>

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "problem/split_plan.h"
#include "quant/bf16.h"
#include "ref/decode_common.h"
#include "ref/detmath.h"
#include "ref/emulated_inputs.h"
#include "ref/kernels.h"
#include "ref/progress_counter.h"
#include "ref/round_to.h"

namespace mlacheck::ref {
namespace {

using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
using detail::kKeyChunk;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int kMaxSplits = problem::kMaxPlanSplits;  // bounds the merge's weight array

// Everything a query needs that does not change between queries.
struct Context {
  const problem::Batch& batch;
  const problem::Recipe& recipe;
  const EmulatedQ& q;
  const KvDecoder& kv;
  EmulatedScales scales;
  const Kernels& k;
  problem::SplitPlan plan;
};

struct Workspace {
  std::vector<float> qt;        // [576, 16]  Qᵀ of one query
  std::vector<float> rows;      // [chunk, 576]  decoded keys, or [chunk, 512] their V
  std::vector<float> s;         // [step, 16]  Sᵀ: scores, then rounded P, of one softmax step
  std::vector<float> acc;       // [16, 512]
  std::vector<float> part_o;    // [splits, 16, 512]
  std::vector<float> part_lse;  // [splits, 16]
};

// b^x and log_b x in float32: the float32 rounding of the (nearly exact) double value.
float exp_b(problem::SoftmaxBase base, float x) {
  const double d = x;
  return static_cast<float>(base == problem::SoftmaxBase::e ? detmath::exp(d) : detmath::exp2(d));
}
float log_b(problem::SoftmaxBase base, float x) {
  const double d = x;
  return static_cast<float>(base == problem::SoftmaxBase::e ? detmath::log(d) : detmath::log2(d));
}

// P rounded to the recipe's format, in place (one switch per call, not per element).
void round_p(problem::PFormat p, quant::Fp8Format f, float* x, int64_t n) {
  switch (p) {
    case problem::PFormat::f32: return;
    case problem::PFormat::bf16:
      for (int64_t i = 0; i < n; ++i) x[i] = round_to_bf16(x[i]);
      return;
    case problem::PFormat::f16:
      for (int64_t i = 0; i < n; ++i) x[i] = round_to_f16(x[i]);
      return;
    case problem::PFormat::fp8:
      for (int64_t i = 0; i < n; ++i) x[i] = round_to_fp8(x[i], f);
      return;
  }
}

// Sᵀ[j][h] of keys t0 .. t0+n-1 (request b) into ws.s, unscaled: Σ_d k[d]·q_h[d] in order of d.
void scores(const Context& c, int64_t b, int64_t t0, int64_t n, Workspace& ws) {
  ws.s.assign(static_cast<std::size_t>(n) * kNumHeads, 0.0f);
  for (int64_t j0 = 0; j0 < n; j0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - j0);
    for (int64_t j = 0; j < nc; ++j) c.kv.row(c.batch.kv_row(b, t0 + j0 + j), &ws.rows[j * kQkDim]);
    c.k.gemm_f32(nc, kNumHeads, kQkDim, ws.rows.data(), kQkDim, 1, ws.qt.data(), kNumHeads,
                 ws.s.data() + j0 * kNumHeads, kNumHeads);
  }
}

// acc += P·V for keys t0 .. t0+n-1, Pᵀ = ws.s [n, 16] read as A(h, t) = s[t·16 + h].
void accumulate_pv(const Context& c, int64_t b, int64_t t0, int64_t n, Workspace& ws) {
  for (int64_t j0 = 0; j0 < n; j0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - j0);
    for (int64_t j = 0; j < nc; ++j) c.kv.v_row(c.batch.kv_row(b, t0 + j0 + j), &ws.rows[j * kVDim]);
    c.k.gemm_f32(kNumHeads, kVDim, nc, ws.s.data() + j0 * kNumHeads, 1, kNumHeads, ws.rows.data(),
                 kVDim, ws.acc.data(), kVDim);
  }
}

// One split: keys [a, e) of request b, of which those before `visible` count. Writes the split's
// normalized output o [16, 512] (float32, before the partial format) and lse [16] (base b).
// The loops over a step's keys run over t outside and the heads inside, so they vectorize across
// heads; each head's max and sum still go in order of t.
void run_split(const Context& c, int64_t b, int64_t a, int64_t e, int64_t visible, Workspace& ws,
               float* o, float* lse) {
  const int64_t end = std::min(e, visible);
  if (end <= a) {
    std::fill(o, o + kNumHeads * kVDim, 0.0f);
    std::fill(lse, lse + kNumHeads, kNegInf);
    return;
  }
  const problem::SoftmaxBase base = c.recipe.base;
  const bool base2 = base == problem::SoftmaxBase::two;
  float m[kNumHeads], l[kNumHeads], m_new[kNumHeads], alpha[kNumHeads], sum[kNumHeads];
  std::fill(m, m + kNumHeads, kNegInf);
  std::fill(l, l + kNumHeads, 0.0f);
  ws.acc.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
  const int64_t step = c.recipe.softmax_tile > 0 ? c.recipe.softmax_tile : e - a;
  for (int64_t t0 = a; t0 < end; t0 += step) {
    const int64_t n = std::min(t0 + step, end) - t0;
    scores(c, b, t0, n, ws);
    float* s = ws.s.data();
    std::copy(m, m + kNumHeads, m_new);
    for (int64_t t = 0; t < n; ++t)
      for (int h = 0; h < kNumHeads; ++h) {
        s[t * kNumHeads + h] *= c.scales.score;
        m_new[h] = std::max(m_new[h], s[t * kNumHeads + h]);
      }
    for (int h = 0; h < kNumHeads; ++h) alpha[h] = m[h] - m_new[h];
    c.k.exp_f32(kNumHeads, alpha, alpha, base2);  // 0 on the first step (m = -inf)
    for (int64_t t = 0; t < n; ++t)
      for (int h = 0; h < kNumHeads; ++h) s[t * kNumHeads + h] -= m_new[h];
    c.k.exp_f32(n * kNumHeads, s, s, base2);  // p = b^(s - m'), unrounded
    std::fill(sum, sum + kNumHeads, 0.0f);
    for (int64_t t = 0; t < n; ++t)
      for (int h = 0; h < kNumHeads; ++h) sum[h] += s[t * kNumHeads + h];
    round_p(c.recipe.p, c.recipe.fp8, s, n * kNumHeads);
    for (int h = 0; h < kNumHeads; ++h) {
      l[h] = l[h] * alpha[h] + sum[h];
      float* acc = ws.acc.data() + h * kVDim;
      for (int d = 0; d < kVDim; ++d) acc[d] *= alpha[h];
      m[h] = m_new[h];
    }
    accumulate_pv(c, b, t0, n, ws);
  }
  for (int h = 0; h < kNumHeads; ++h) {
    for (int d = 0; d < kVDim; ++d) {
      float x = ws.acc[h * kVDim + d] / l[h];
      if (c.scales.out_scaled) x *= c.scales.out;
      o[h * kVDim + d] = x;
    }
    lse[h] = m[h] + log_b(base, l[h]);
  }
}

float natural_lse(problem::SoftmaxBase base, float lse) {
  if (base == problem::SoftmaxBase::e) return lse;
  return static_cast<float>(static_cast<double>(lse) * detmath::detail::kLn2);
}

// Query i of request b: out [16, 512] bf16 bits, lse [16] natural log.
void decode_query(const Context& c, int64_t b, int64_t i, Workspace& ws, uint16_t* out,
                  float* lse) {
  const int64_t row = c.batch.qo_indptr()[b] + i;
  const float* q = c.q.values.data() + row * kNumHeads * kQkDim;
  for (int h = 0; h < kNumHeads; ++h)
    for (int d = 0; d < kQkDim; ++d) ws.qt[d * kNumHeads + h] = q[h * kQkDim + d];
  const int64_t len = c.batch.kv_len(b);
  const int64_t visible = c.batch.visible_kv(b, i);
  const problem::SoftmaxBase base = c.recipe.base;

  if (!c.plan.split_k()) {  // no split-K
    float* o = ws.part_o.data();
    float* ls = ws.part_lse.data();
    run_split(c, b, 0, len, visible, ws, o, ls);
    for (int e = 0; e < kNumHeads * kVDim; ++e) out[e] = quant::f32_to_bf16(o[e]);
    for (int h = 0; h < kNumHeads; ++h) lse[h] = natural_lse(base, ls[h]);
    return;
  }

  const int num_splits = c.plan.splits_of(len);
  const int64_t per_split = (len + num_splits - 1) / num_splits;
  for (int sp = 0; sp < num_splits; ++sp) {
    const int64_t a = std::min(sp * per_split, len);
    const int64_t e = std::min(a + per_split, len);
    float* o = ws.part_o.data() + static_cast<int64_t>(sp) * kNumHeads * kVDim;
    run_split(c, b, a, e, visible, ws, o, ws.part_lse.data() + sp * kNumHeads);
    if (c.recipe.partial == problem::PartialFormat::bf16)
      for (int e2 = 0; e2 < kNumHeads * kVDim; ++e2) o[e2] = round_to_bf16(o[e2]);
  }

  // LSE merge, per head, splits in order.
  for (int h = 0; h < kNumHeads; ++h) {
    float big = kNegInf;
    for (int sp = 0; sp < num_splits; ++sp) big = std::max(big, ws.part_lse[sp * kNumHeads + h]);
    uint16_t* dst = out + h * kVDim;
    if (big == kNegInf) {  // no visible key in any split
      std::fill(dst, dst + kVDim, quant::f32_to_bf16(0.0f));
      lse[h] = kNegInf;
      continue;
    }
    float w[kMaxSplits];
    float total = 0.0f;
    for (int sp = 0; sp < num_splits; ++sp) {
      w[sp] = exp_b(base, ws.part_lse[sp * kNumHeads + h] - big);  // empty split: e^-inf = 0
      total += w[sp];
    }
    for (int d = 0; d < kVDim; ++d) {
      float acc = 0.0f;
      for (int sp = 0; sp < num_splits; ++sp)
        acc += w[sp] * ws.part_o[(static_cast<int64_t>(sp) * kNumHeads + h) * kVDim + d];
      dst[d] = quant::f32_to_bf16(acc / total);
    }
    lse[h] = natural_lse(base, big + log_b(base, total));
  }
}

}  // namespace

EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               int num_splits, Progress* progress) {
  if (num_splits < 0 || num_splits > kMaxSplits)
    throw problem::ProblemError(
        fmt::format("num_splits = {}; supported: 0 (no split-K) .. {}", num_splits, kMaxSplits));
  return decode_emulated(batch, q_bf16, cache, recipe, problem::SplitPlan::uniform(num_splits),
                         progress);
}

EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               const problem::SplitPlan& plan, Progress* progress) {
  detail::check_q(batch, q_bf16.size());
  if (plan.num_splits < 0 || plan.num_splits > kMaxSplits || plan.chunk_keys < 0)
    throw problem::ProblemError(
        fmt::format("split plan: num_splits = {} (supported: 0 .. {}), chunk_keys = {} (>= 0)",
                    plan.num_splits, kMaxSplits, plan.chunk_keys));
  if (recipe.softmax_tile < 0)
    throw problem::ProblemError(fmt::format("recipe {} has softmax_tile {} < 0", recipe.name,
                                            recipe.softmax_tile));
  if (cache.rows != batch.cache_rows())
    throw problem::ProblemError(fmt::format("KV cache has {} rows, the batch's layout {}",
                                            cache.rows, batch.cache_rows()));
  switch (cache.format) {
    case problem::KvFormat::bf16:
      detail::check_cache_size(batch, "kv (bf16)", cache.bf16.size(), kQkDim);
      break;
    case problem::KvFormat::fp8:
      detail::check_cache_size(batch, "kv (fp8)", cache.fp8.size(), kQkDim);
      break;
    case problem::KvFormat::mxfp4:
      detail::check_cache_size(batch, "kv (mxfp4)", cache.mxfp4.size(), problem::kMxfp4RowBytes);
      detail::check_cache_size(batch, "kv (mxfp4 scales)", cache.mxfp4_scale.size(),
                               problem::kMxfp4RowScales);
      break;
  }
  const KvDecoder kv(cache, recipe);
  const EmulatedQ q = quantize_q(q_bf16, recipe);
  const Context c{batch, recipe, q, kv, emulated_scales(recipe, q, kv), kernels(), plan};
  const int most_splits = std::max(plan.max_splits(batch.max_kv_len()), 1);

  EmulatedResult r;
  r.out.resize(static_cast<std::size_t>(batch.total_q()) * kNumHeads * kVDim);
  r.lse.resize(static_cast<std::size_t>(batch.total_q()) * kNumHeads);
  ProgressCounter counter(progress, detail::total_work_units(batch));
  const int64_t requests = batch.num_requests();

#pragma omp parallel
  {
    Workspace ws;
    ws.qt.resize(kQkDim * kNumHeads);
    ws.rows.resize(kKeyChunk * kQkDim);
    ws.part_o.resize(static_cast<std::size_t>(most_splits) * kNumHeads * kVDim);
    ws.part_lse.resize(static_cast<std::size_t>(most_splits) * kNumHeads);
    // One thread computes a request start to end: the schedule cannot change a bit.
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < requests; ++b) {
      for (int64_t i = 0; i < batch.q_len(b); ++i) {
        const int64_t row = batch.qo_indptr()[b] + i;
        decode_query(c, b, i, ws, r.out.data() + row * kNumHeads * kVDim,
                     r.lse.data() + row * kNumHeads);
      }
      counter.add(detail::work_units(batch, b));
    }
  }
  return r;
}

}  // namespace mlacheck::ref
