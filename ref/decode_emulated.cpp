#include "ref/decode_emulated.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "problem/split_plan.h"
#include "quant/bf16.h"
#include "quant/formats.h"
#include "quant/names.h"
#include "ref/decode_common.h"
#include "ref/detmath.h"
#include "ref/emulated_inputs.h"
#include "ref/kernels.h"
#include "ref/progress_counter.h"
#include "ref/round_to.h"
#include "ref/tensor_core_dot.h"

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
  const problem::Schedule& schedule;
  const problem::BatchSplits& splits;  // the schedule's ranges over this batch
  const EmulationOptions& options;
  float p_min_normal;           // the P format's smallest normal (sensitivity's underflow set)
  float p_half_subnormal_step;  // h: the largest RNE error below it
  float p_unit_roundoff;        // the largest relative RNE error of a normal P (0: f32 P)
  // Products summed by ref/fp8_mma.h's model (Recipe::fp8_acc tc64 or tc) instead of in float32:
  // only where both operands are still fp8 codes (not made exact by drift's waterfall).
  bool qk_tensor_core = false, pv_tensor_core = false;
  std::span<const int> qk_order, pv_order;  // EmulationOptions::tc_qk_order / tc_pv_order
  bool promoted = true;  // tc64: a fresh accumulator every 64 products; tc: never
};

// Where one query's optional outputs go (null when not asked for).
struct QueryOut {
  uint16_t* out;
  float* lse;
  float* out_f32 = nullptr;
  float* partial_out = nullptr;  // [S, 16, 512]
  float* partial_lse = nullptr;  // [S, 16]
  float* sum_rounding = nullptr;          // [16]
  float* partial_sum_rounding = nullptr;  // [S, 16]
  float* partial_flip = nullptr;          // [S, 16, 512] (capture_partials with p_flips)
  float* spread = nullptr;         // [16, 512]
  float* spread_abs = nullptr;     // [16, 512]
  float* underflow = nullptr;      // [16, 512]
  float* underflow_abs = nullptr;  // [16, 512]
  float* spread_all = nullptr;     // [16, 512]
  float* abs_all = nullptr;        // [16, 512]
  float* score_range = nullptr;    // [16]
  float* flip = nullptr;           // [16, 512]
};

struct Workspace {
  std::vector<float> qt;        // [576, 16]  Qᵀ of one query
  std::vector<float> rows;      // [chunk, 576]  decoded keys, or [chunk, 512] their V
  std::vector<float> s;         // [step, 16]  Sᵀ: scores, then rounded P, of one softmax step
  std::vector<float> acc;       // [16, 512]
  std::vector<float> part_o;    // [splits, 16, 512]
  std::vector<float> part_lse;  // [splits, 16]
  std::vector<float> part_sum_rounding;  // [splits, 16]
  // sensitivity: sums over keys of P^2 v^2, P^2 v, P^2, P |v| and, over keys whose P underflows,
  // min(h, P)^2 v^2 and min(h, P) |v|; the unrounded P of the current step
  std::vector<float> p2v2, p2v, p2, pv_abs, under, under_abs, p_raw;
  std::vector<float> w2, w1, u2, u1;  // the per-key weights of those sums [n, 16]
  // Over the keys at the row max (P = 1: unweighted), sums of v^2, v and |v|, and how many there
  // are per head: with them the sums cover every key, as a split partial's rounding does.
  std::vector<float> max_v_sq, max_v_sum, max_v_abs;  // [16, 512]
  float max_keys[kNumHeads];
  std::vector<float> flip_w, flip_acc;  // p_flips: step sizes [n, 16], their sum against |V|
  std::vector<float> part_flip;         // [splits, 16, 512]
  std::vector<float> v_sq, v_abs;     // [chunk, 512] V^2 and |V| of the keys of one chunk
  // Recipe::fp8_acc tc64 / tc (ref/tensor_core_dot.h): Qᵀ of one query, one K row, P and V of one
  // chunk, each in the kernel's run order.
  TensorCoreOperand tc_q, tc_k, tc_p, tc_v;  // [576, 16], [576, 1], [chunk, 16], [chunk, 512]
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

// An EmulationOptions tc order: empty, or a permutation of the run's 64 positions.
void check_tc_order(std::span<const int> order, const char* which) {
  if (order.empty()) return;
  std::vector<bool> seen(problem::kTensorCoreRun, false);
  bool permutation = order.size() == static_cast<std::size_t>(problem::kTensorCoreRun);
  for (std::size_t p = 0; permutation && p < order.size(); ++p) {
    const int o = order[p];
    permutation = o >= 0 && o < problem::kTensorCoreRun && !seen[static_cast<std::size_t>(o)];
    if (permutation) seen[static_cast<std::size_t>(o)] = true;
  }
  if (!permutation)
    throw problem::ProblemError(fmt::format("EmulationOptions::{}: {} values, not a permutation of 0 .. {}",
                                            which, order.size(), problem::kTensorCoreRun - 1));
}

// Sᵀ[j][h] of keys t0 .. t0+n-1 (request b) into ws.s, unscaled: Σ_d k[d]·q_h[d] in order of d
// (by the tensor core's model for fp8-acc tc64 / tc).
void scores(const Context& c, int64_t b, int64_t t0, int64_t n, Workspace& ws) {
  ws.s.assign(static_cast<std::size_t>(n) * kNumHeads, 0.0f);
  for (int64_t j0 = 0; j0 < n; j0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - j0);
    for (int64_t j = 0; j < nc; ++j) c.kv.row(c.batch.kv_row(b, t0 + j0 + j), &ws.rows[j * kQkDim]);
    if (!c.qk_tensor_core) {
      c.k.gemm_f32(nc, kNumHeads, kQkDim, ws.rows.data(), kQkDim, 1, ws.qt.data(), kNumHeads,
                   ws.s.data() + j0 * kNumHeads, kNumHeads);
      continue;
    }
    for (int64_t j = 0; j < nc; ++j) {  // ws.s starts at 0: C = 0
      ws.tc_k.assign(&ws.rows[j * kQkDim], 1, kQkDim, 1, c.qk_order);
      tensor_core_products(ws.s.data() + (j0 + j) * kNumHeads, ws.tc_k, 0, ws.tc_q, c.promoted);
    }
  }
}

// acc += P·V for keys t0 .. t0+n-1, Pᵀ = ws.s [n, 16] read as A(h, t) = s[t·16 + h]. With the
// tensor core's sums a run is 64 keys from the step's first, so a chunk of kKeyChunk keys (a
// multiple of the run) holds whole runs; tc carries acc through them as the accumulator's C.
static_assert(kKeyChunk % problem::kTensorCoreRun == 0);
void accumulate_pv(const Context& c, int64_t b, int64_t t0, int64_t n, Workspace& ws) {
  for (int64_t j0 = 0; j0 < n; j0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - j0);
    for (int64_t j = 0; j < nc; ++j) c.kv.v_row(c.batch.kv_row(b, t0 + j0 + j), &ws.rows[j * kVDim]);
    if (!c.pv_tensor_core) {
      c.k.gemm_f32(kNumHeads, kVDim, nc, ws.s.data() + j0 * kNumHeads, 1, kNumHeads,
                   ws.rows.data(), kVDim, ws.acc.data(), kVDim);
      continue;
    }
    ws.tc_p.assign(ws.s.data() + j0 * kNumHeads, kNumHeads, nc, kNumHeads, c.pv_order);
    ws.tc_v.assign(ws.rows.data(), kVDim, nc, kVDim, c.pv_order);
    for (int h = 0; h < kNumHeads; ++h)
      tensor_core_products(ws.acc.data() + h * kVDim, ws.tc_p, h, ws.tc_v, c.promoted);
  }
}

// The sums behind EmulatedResult's sensitivity tensors for keys t0 .. t0+n-1, one softmax step
// over the whole row (so P needs no rescaling): ws.s holds the rounded P of this step, ws.p_raw the
// unrounded one. Keys at the row max (P = 1 exactly) are left out: every schedule gives them
// P = b^0 = 1, which no format rounds.
void accumulate_sensitivity(const Context& c, int64_t b, int64_t t0, int64_t n, Workspace& ws) {
  // Per-key weights as [n, 16] (heads inside, as ws.s): P^2, P, and for underflowing P min(h, P)^2
  // and min(h, P); 0 for keys at the row max.
  const auto nh = static_cast<std::size_t>(n) * kNumHeads;
  ws.w2.assign(nh, 0.0f);
  ws.w1.assign(nh, 0.0f);
  ws.u2.assign(nh, 0.0f);
  ws.u1.assign(nh, 0.0f);
  bool any_under = false;
  for (std::size_t i = 0; i < nh; ++i) {
    const float raw = ws.p_raw[i];
    if (raw == 1.0f) {
      ws.max_keys[i % kNumHeads] += 1;
      continue;
    }
    const float p = ws.s[i];
    ws.w2[i] = p * p;
    ws.w1[i] = p;
    if (raw < c.p_min_normal) {
      const float small = std::min(c.p_half_subnormal_step, raw);  // RNE error bound there
      ws.u2[i] = small * small;
      ws.u1[i] = small;
      any_under = any_under || small > 0;
    }
    ws.p2[i % kNumHeads] += p * p;
  }
  // The sums over keys as products with the blocked kernels (same order on every machine):
  // C[16, 512] += W^T [16, n] x (V^2, V or |V|) [n, 512].
  const float scale = c.scales.out_scaled ? c.scales.out : 1.0f;
  ws.v_sq.resize(static_cast<std::size_t>(kKeyChunk) * kVDim);
  ws.v_abs.resize(static_cast<std::size_t>(kKeyChunk) * kVDim);
  for (int64_t j0 = 0; j0 < n; j0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - j0);
    for (int64_t j = 0; j < nc; ++j) {
      float* v = &ws.rows[j * kVDim];
      c.kv.v_row(c.batch.kv_row(b, t0 + j0 + j), v);
      for (int d = 0; d < kVDim; ++d) {
        v[d] *= scale;
        ws.v_sq[j * kVDim + d] = v[d] * v[d];
        ws.v_abs[j * kVDim + d] = std::fabs(v[d]);
      }
      // Keys at the row max, unweighted (usually one per head: a loop is cheaper than a product).
      for (int h = 0; h < kNumHeads; ++h) {
        if (ws.p_raw[static_cast<std::size_t>(j0 + j) * kNumHeads + h] != 1.0f) continue;
        float* sq = &ws.max_v_sq[h * kVDim];
        float* sum = &ws.max_v_sum[h * kVDim];
        float* abs = &ws.max_v_abs[h * kVDim];
        for (int d = 0; d < kVDim; ++d) {
          sq[d] += ws.v_sq[j * kVDim + d];
          sum[d] += v[d];
          abs[d] += ws.v_abs[j * kVDim + d];
        }
      }
    }
    const auto gemm = [&](const std::vector<float>& w, const std::vector<float>& rhs,
                          std::vector<float>& out) {
      c.k.gemm_f32(kNumHeads, kVDim, nc, w.data() + j0 * kNumHeads, 1, kNumHeads, rhs.data(),
                   kVDim, out.data(), kVDim);
    };
    gemm(ws.w2, ws.v_sq, ws.p2v2);
    gemm(ws.w2, ws.rows, ws.p2v);
    gemm(ws.w1, ws.v_abs, ws.pv_abs);
    if (any_under) {  // all-zero weights add nothing: skip the two products
      gemm(ws.u2, ws.v_sq, ws.under);
      gemm(ws.u1, ws.v_abs, ws.under_abs);
    }
  }
}

void finish_sensitivity(const Context& c, const Workspace& ws, const float* l, const QueryOut& q) {
  const double scale = c.scales.out_scaled ? c.scales.out : 1.0;
  for (int h = 0; h < kNumHeads; ++h)
    for (int d = 0; d < kVDim; ++d) {
      const std::size_t i = static_cast<std::size_t>(h) * kVDim + d;
      const double lh = l[h];
      const double o = ws.acc[i] / lh * scale;  // the row's output (V above carries the scale)
      const double plain = ws.p2v2[i];
      const double centred = plain - 2 * o * ws.p2v[i] + o * o * ws.p2[h];
      q.spread[i] = static_cast<float>(std::sqrt(std::max({plain, centred, 0.0})) / lh);
      q.spread_abs[i] = static_cast<float>(ws.pv_abs[i] / lh);
      q.underflow[i] = static_cast<float>(std::sqrt(static_cast<double>(ws.under[i])) / lh);
      q.underflow_abs[i] = static_cast<float>(ws.under_abs[i] / lh);
      const double plain_all = plain + ws.max_v_sq[i];
      const double centred_all = plain_all - 2 * o * (ws.p2v[i] + ws.max_v_sum[i]) +
                                 o * o * (ws.p2[h] + ws.max_keys[h]);
      q.spread_all[i] = static_cast<float>(std::sqrt(std::max({plain_all, centred_all, 0.0})) / lh);
      q.abs_all[i] = static_cast<float>((ws.pv_abs[i] + ws.max_v_abs[i]) / lh);
    }
}

// EmulationOptions::p_flips: the keys of one softmax step whose unrounded P (s, [n, 16]) lies so
// close to a rounding midpoint of the P format that another implementation's P, off by a
// relative flip_noise, may round to the neighbouring code; ws.flip_w gets the size of that step
// (0 elsewhere). False when no key of the step can flip.
bool flip_weights(const Context& c, const float* s, int64_t n, Workspace& ws) {
  if (c.recipe.p == problem::PFormat::f32) return false;
  const auto nh = static_cast<std::size_t>(n) * kNumHeads;
  ws.flip_w.assign(nh, 0.0f);
  bool any = false;
  const double delta = c.options.flip_noise;
  for (std::size_t i = 0; i < nh; ++i) {
    const float lo = round_to(c.recipe.p, c.recipe.fp8, static_cast<float>(s[i] * (1 - delta)));
    const float hi = round_to(c.recipe.p, c.recipe.fp8, static_cast<float>(s[i] * (1 + delta)));
    if (lo != hi) {
      ws.flip_w[i] = hi - lo;
      any = true;
    }
  }
  return any;
}

// flip_acc += flip_w^T |V| for keys t0 .. t0+n-1 (the blocked product, as accumulate_pv).
void accumulate_flips(const Context& c, int64_t b, int64_t t0, int64_t n, Workspace& ws) {
  for (int64_t j0 = 0; j0 < n; j0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - j0);
    for (int64_t j = 0; j < nc; ++j) {
      c.kv.v_row(c.batch.kv_row(b, t0 + j0 + j), &ws.rows[j * kVDim]);
      for (int d = 0; d < kVDim; ++d) ws.rows[j * kVDim + d] = std::fabs(ws.rows[j * kVDim + d]);
    }
    c.k.gemm_f32(kNumHeads, kVDim, nc, ws.flip_w.data() + j0 * kNumHeads, 1, kNumHeads,
                 ws.rows.data(), kVDim, ws.flip_acc.data(), kVDim);
  }
}

// One split: keys [a, e) of request b, of which those before `visible` count. Writes the split's
// normalized output o [16, 512] (float32, before the partial format) and lse [16] (base b).
// The loops over a step's keys run over t outside and the heads inside, so they vectorize across
// heads; each head's max and sum still go in order of t.
// sum_rounding [16]: EmulatedResult::row_sum_rounding of the split (its own running maxima).
void run_split(const Context& c, int64_t b, int64_t a, int64_t e, int64_t visible, Workspace& ws,
               float* o, float* lse, float* sum_rounding, const QueryOut* sens = nullptr,
               float* flip_o = nullptr) {
  const int64_t end = std::min(e, visible);
  if (end <= a) {
    std::fill(o, o + kNumHeads * kVDim, 0.0f);
    std::fill(lse, lse + kNumHeads, kNegInf);
    std::fill(sum_rounding, sum_rounding + kNumHeads, 0.0f);
    if (flip_o) std::fill(flip_o, flip_o + kNumHeads * kVDim, 0.0f);
    return;
  }
  if (flip_o) ws.flip_acc.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
  const problem::SoftmaxBase base = c.recipe.base;
  const bool base2 = base == problem::SoftmaxBase::two;
  float m[kNumHeads], l[kNumHeads], m_new[kNumHeads], alpha[kNumHeads], sum[kNumHeads];
  double rounding[kNumHeads];  // sum_j e_j of row_sum_rounding, rescaled with l
  std::fill(m, m + kNumHeads, kNegInf);
  std::fill(l, l + kNumHeads, 0.0f);
  std::fill(rounding, rounding + kNumHeads, 0.0);
  ws.acc.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
  const int64_t step = c.schedule.softmax_tile > 0 ? c.schedule.softmax_tile : e - a;
  const std::pair<int64_t, int64_t> masked_keys =
      c.options.fault_masked_keys ? c.options.fault_masked_keys(b, c.batch.kv_len(b))
                                  : std::pair<int64_t, int64_t>{0, 0};
  if (sens) {
    ws.p2v2.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.p2v.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.under.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.pv_abs.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.under_abs.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.p2.assign(kNumHeads, 0.0f);
    ws.max_v_sq.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.max_v_sum.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    ws.max_v_abs.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0f);
    std::fill(ws.max_keys, ws.max_keys + kNumHeads, 0.0f);
  }
  for (int64_t t0 = a; t0 < end; t0 += step) {
    const int64_t n = std::min(t0 + step, end) - t0;
    scores(c, b, t0, n, ws);
    float* s = ws.s.data();
    std::copy(m, m + kNumHeads, m_new);
    for (int64_t t = 0; t < n; ++t) {
      const bool masked = t0 + t >= masked_keys.first && t0 + t < masked_keys.second;
      for (int h = 0; h < kNumHeads; ++h) {
        s[t * kNumHeads + h] = masked ? kNegInf : s[t * kNumHeads + h] * c.scales.score;
        m_new[h] = std::max(m_new[h], s[t * kNumHeads + h]);
      }
    }
    // What p and alpha subtract: the new max, or 0 where a planted fault has masked every key
    // seen so far (so p = alpha = 0 there, not NaN).
    float sub[kNumHeads];
    for (int h = 0; h < kNumHeads; ++h) sub[h] = m_new[h] == kNegInf ? 0.0f : m_new[h];
    if (sens)  // one step over the row: m_new is the row max
      for (int h = 0; h < kNumHeads; ++h) {
        float lowest = m_new[h];
        for (int64_t t = 0; t < n; ++t) lowest = std::min(lowest, s[t * kNumHeads + h]);
        sens->score_range[h] = (m_new[h] - lowest) *
                               (base2 ? static_cast<float>(detmath::detail::kLn2) : 1.0f);
      }
    for (int h = 0; h < kNumHeads; ++h) alpha[h] = m[h] - sub[h];
    c.k.exp_f32(kNumHeads, alpha, alpha, base2);  // 0 on the first step (m = -inf)
    for (int64_t t = 0; t < n; ++t)
      for (int h = 0; h < kNumHeads; ++h) s[t * kNumHeads + h] -= sub[h];
    c.k.exp_f32(n * kNumHeads, s, s, base2);  // p = b^(s - m'), unrounded
    std::fill(sum, sum + kNumHeads, 0.0f);
    for (int64_t t = 0; t < n; ++t)
      for (int h = 0; h < kNumHeads; ++h) sum[h] += s[t * kNumHeads + h];
    // What rounding each P of the step could change in a row sum of rounded P (row_sum_rounding).
    double step_rounding[kNumHeads] = {};
    if (c.p_unit_roundoff > 0)
      for (int64_t t = 0; t < n; ++t)
        for (int h = 0; h < kNumHeads; ++h) {
          const float raw = s[t * kNumHeads + h];
          step_rounding[h] += raw == 1.0f              ? 0.0
                              : raw < c.p_min_normal ? std::min(c.p_half_subnormal_step, raw)
                                                     : static_cast<double>(c.p_unit_roundoff) * raw;
        }
    if (sens) ws.p_raw.assign(s, s + n * kNumHeads);
    const bool flips = flip_o && flip_weights(c, s, n, ws);  // before P is rounded
    round_p(c.recipe.p, c.recipe.fp8, s, n * kNumHeads);
    for (int h = 0; h < kNumHeads; ++h) {
      l[h] = l[h] * alpha[h] + sum[h];
      rounding[h] = rounding[h] * alpha[h] + step_rounding[h];
      float* acc = ws.acc.data() + h * kVDim;
      for (int d = 0; d < kVDim; ++d) acc[d] *= alpha[h];
      if (flip_o)
        for (int d = 0; d < kVDim; ++d) ws.flip_acc[h * kVDim + d] *= alpha[h];
      m[h] = m_new[h];
    }
    accumulate_pv(c, b, t0, n, ws);
    if (flips) accumulate_flips(c, b, t0, n, ws);
    if (sens) accumulate_sensitivity(c, b, t0, n, ws);
  }
  if (sens) finish_sensitivity(c, ws, l, *sens);
  for (int h = 0; h < kNumHeads; ++h) {
    for (int d = 0; d < kVDim; ++d) {
      float x = l[h] > 0 ? ws.acc[h * kVDim + d] / l[h] : 0.0f;  // l = 0: every key masked
      if (c.scales.out_scaled) x *= c.scales.out;
      o[h * kVDim + d] = x;
      if (flip_o)
        flip_o[h * kVDim + d] =
            ws.flip_acc[h * kVDim + d] / l[h] * (c.scales.out_scaled ? c.scales.out : 1.0f);
    }
    lse[h] = m[h] + log_b(base, l[h]);
    sum_rounding[h] = static_cast<float>(rounding[h] / l[h]);
  }
}

// 2^(1 - bias) of the P format (quant's format table; IEEE binary16: bias 15); 0 for f32 P,
// which is never rounded.
float p_smallest_normal(const problem::Recipe& r) {
  switch (r.p) {
    case problem::PFormat::f32: return 0.0f;
    case problem::PFormat::bf16:
      return std::ldexp(1.0f, 1 - quant::format_info(quant::ElemFormat::bf16).bias);
    case problem::PFormat::f16: return std::ldexp(1.0f, 1 - 15);
    case problem::PFormat::fp8:
      return std::ldexp(1.0f, 1 - quant::format_info(quant::elem_format(r.fp8)).bias);
  }
  return 0.0f;
}

// 2^-(m + 1): the largest relative RNE error of a normal value of the P format; 0 for f32 P.
float p_unit_roundoff(const problem::Recipe& r) {
  switch (r.p) {
    case problem::PFormat::f32: return 0.0f;
    case problem::PFormat::bf16:
      return std::ldexp(1.0f, -(quant::format_info(quant::ElemFormat::bf16).mant_bits + 1));
    case problem::PFormat::f16: return std::ldexp(1.0f, -(10 + 1));
    case problem::PFormat::fp8:
      return std::ldexp(1.0f, -(quant::format_info(quant::elem_format(r.fp8)).mant_bits + 1));
  }
  return 0.0f;
}

// h = 2^(1 - bias) 2^-(m + 1): half the spacing of the P format below its smallest normal.
float p_half_subnormal_step(const problem::Recipe& r) { return p_smallest_normal(r) * p_unit_roundoff(r); }

float natural_lse(problem::SoftmaxBase base, float lse) {
  if (base == problem::SoftmaxBase::e) return lse;
  return static_cast<float>(static_cast<double>(lse) * detmath::detail::kLn2);
}

// Query i of request b: out [16, 512] bf16 bits, lse [16] natural log, and what options ask for.
void decode_query(const Context& c, int64_t b, int64_t i, Workspace& ws, const QueryOut& q_out) {
  const int64_t row = c.batch.qo_indptr()[b] + i;
  const float* q = c.q.values.data() + row * kNumHeads * kQkDim;
  for (int h = 0; h < kNumHeads; ++h)
    for (int d = 0; d < kQkDim; ++d)
      ws.qt[d * kNumHeads + h] =
          c.options.fault_skip_rope && d >= problem::kVDim ? 0.0f : q[h * kQkDim + d];
  if (c.qk_tensor_core)
    ws.tc_q.assign(ws.qt.data(), kNumHeads, kQkDim, kNumHeads, c.qk_order);
  const int64_t len = c.batch.kv_len(b);
  const int64_t visible = c.batch.visible_kv(b, i);
  const problem::SoftmaxBase base = c.recipe.base;
  uint16_t* out = q_out.out;
  float* lse = q_out.lse;
  const auto keep_partial = [&](int sp, const float* o, const float* ls, const float* sr, const float* flip) {
    if (!q_out.partial_out) return;
    std::copy(o, o + kNumHeads * kVDim, q_out.partial_out + static_cast<int64_t>(sp) * kNumHeads * kVDim);
    for (int h = 0; h < kNumHeads; ++h) q_out.partial_lse[sp * kNumHeads + h] = natural_lse(base, ls[h]);
    std::copy(sr, sr + kNumHeads, q_out.partial_sum_rounding + sp * kNumHeads);
    if (q_out.partial_flip && flip)
      std::copy(flip, flip + kNumHeads * kVDim, q_out.partial_flip + static_cast<int64_t>(sp) * kNumHeads * kVDim);
  };

  if (!c.schedule.split_k()) {  // no split-K
    float* o = ws.part_o.data();
    float* ls = ws.part_lse.data();
    float* sr = ws.part_sum_rounding.data();
    run_split(c, b, 0, len, visible, ws, o, ls, sr, q_out.spread ? &q_out : nullptr, q_out.flip);
    for (int e = 0; e < kNumHeads * kVDim; ++e) out[e] = quant::f32_to_bf16(o[e]);
    if (q_out.out_f32) std::copy(o, o + kNumHeads * kVDim, q_out.out_f32);
    for (int h = 0; h < kNumHeads; ++h) lse[h] = natural_lse(base, ls[h]);
    std::copy(sr, sr + kNumHeads, q_out.sum_rounding);
    keep_partial(0, o, ls, sr, q_out.flip);
    return;
  }

  const std::vector<problem::KeyRange> ranges = c.splits.ranges(b);
  const int num_splits = static_cast<int>(ranges.size());
  for (int sp = 0; sp < num_splits; ++sp) {
    float* o = ws.part_o.data() + static_cast<int64_t>(sp) * kNumHeads * kVDim;
    float* ls = ws.part_lse.data() + sp * kNumHeads;
    float* sr = ws.part_sum_rounding.data() + sp * kNumHeads;
    float* flip = q_out.flip ? ws.part_flip.data() + static_cast<int64_t>(sp) * kNumHeads * kVDim : nullptr;
    run_split(c, b, ranges[static_cast<std::size_t>(sp)].begin,
              ranges[static_cast<std::size_t>(sp)].end, visible, ws, o, ls, sr, nullptr, flip);
    if (c.recipe.partial == problem::PartialFormat::bf16)
      for (int e2 = 0; e2 < kNumHeads * kVDim; ++e2) o[e2] = round_to_bf16(o[e2]);
    keep_partial(sp, o, ls, sr, flip);
  }
  // The merged row sum is a positive combination of the splits' sums: its relative change is at
  // most the largest of theirs.
  for (int h = 0; h < kNumHeads; ++h) {
    float worst = 0.0f;
    for (int sp = 0; sp < num_splits; ++sp) worst = std::max(worst, ws.part_sum_rounding[sp * kNumHeads + h]);
    q_out.sum_rounding[h] = worst;
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
      if (q_out.flip) {
        float f = 0.0f;
        for (int sp = 0; sp < num_splits; ++sp)
          f += w[sp] * ws.part_flip[(static_cast<int64_t>(sp) * kNumHeads + h) * kVDim + d];
        q_out.flip[h * kVDim + d] = f / total;
      }
      const float x = acc / total;
      dst[d] = quant::f32_to_bf16(x);
      if (q_out.out_f32) q_out.out_f32[h * kVDim + d] = x;
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
  return decode_emulated(batch, q_bf16, cache, recipe, plan, EmulationOptions{}, progress);
}

EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               const problem::SplitPlan& plan, const EmulationOptions& options,
                               Progress* progress) {
  if (plan.num_splits < 0 || plan.num_splits > kMaxSplits || plan.chunk_keys < 0)
    throw problem::ProblemError(
        fmt::format("split plan: num_splits = {} (supported: 0 .. {}), chunk_keys = {} (>= 0)",
                    plan.num_splits, kMaxSplits, plan.chunk_keys));
  if (plan.balanced_blocks < 0 ||
      (plan.is_balanced() && (plan.balanced_blocks > kMaxSplits || plan.unit_keys < 1 ||
                              plan.overhead_units < 0)))
    throw problem::ProblemError(fmt::format(
        "split plan: balanced over {} blocks (supported: 1 .. {}), unit_keys = {} (>= 1), "
        "overhead_units = {} (>= 0)",
        plan.balanced_blocks, kMaxSplits, plan.unit_keys, plan.overhead_units));
  if (recipe.softmax_tile < 0)
    throw problem::ProblemError(fmt::format("recipe {} has softmax_tile {} < 0", recipe.name,
                                            recipe.softmax_tile));
  return decode_emulated(batch, q_bf16, cache, recipe,
                         problem::Schedule::from_plan(plan, recipe.softmax_tile), options, progress);
}

EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               const problem::Schedule& schedule, const EmulationOptions& options,
                               Progress* progress) {
  detail::check_q(batch, q_bf16.size());
  if (schedule.softmax_tile < 0)
    throw problem::ProblemError(fmt::format("schedule tile {} < 0", schedule.softmax_tile));
  if (schedule.split_k() && schedule.kind != problem::Schedule::Kind::table &&
      schedule.kind != problem::Schedule::Kind::balanced && schedule.count < 1)
    throw problem::ProblemError(fmt::format("schedule {}: count must be >= 1", to_string(schedule)));
  const problem::BatchSplits splits(schedule, batch.kv_indptr());  // checks a balanced one's numbers
  if (splits.max_ranges() > kMaxSplits)
    throw problem::ProblemError(fmt::format(
        "schedule {} cuts a request into {} splits; the merge supports at most {}",
        to_string(schedule), splits.max_ranges(), kMaxSplits));
  schedule.check_fits(batch.kv_indptr());
  if (options.sensitivity && (schedule.split_k() || schedule.softmax_tile > 0))
    throw problem::ProblemError(
        "the sensitivity sums need a single pass with one softmax step (schedule 'single')");
  if (cache.rows != batch.cache_rows())
    throw problem::ProblemError(fmt::format("KV cache has {} rows, the batch's layout {}",
                                            cache.rows, batch.cache_rows()));
  switch (cache.on_read ? problem::KvFormat::bf16 : cache.format) {  // on read: from bf16
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
  for (const int64_t b : options.requests)
    if (b < 0 || b >= batch.num_requests())
      throw problem::ProblemError(fmt::format("request {} is not in the batch ({} requests)", b,
                                              batch.num_requests()));
  check_tc_order(options.tc_qk_order, "tc_qk_order");
  check_tc_order(options.tc_pv_order, "tc_pv_order");
  const KvDecoder kv(cache, recipe, {options.exact_k, options.exact_v});
  problem::Recipe q_recipe = recipe;
  if (options.exact_q) q_recipe.q = problem::QFormat::bf16;
  const EmulatedQ q = quantize_q(q_bf16, q_recipe);
  const float p_min_normal = p_smallest_normal(recipe);
  const bool tensor_core = recipe.fp8_acc != problem::Fp8Accumulation::f32;
  // ref/fp8_mma.h's model aligns a subnormal factor at e4m3fn's smallest exponent (the sm_90 tensor
  // core's fp8 is e4m3fn); an e4m3fnuz value's would be another.
  if (tensor_core && recipe.fp8 != quant::Fp8Format::e4m3fn)
    throw problem::ProblemError(fmt::format(
        "recipe {}: fp8-acc={} sums e4m3fn codes as the sm_90 tensor core does; its fp8 variant is {}",
        problem::spell(recipe), problem::to_string(recipe.fp8_acc), quant::to_string(recipe.fp8)));
  const Context c{batch, recipe, q, kv, emulated_scales(q_recipe, q, kv), kernels(), schedule,
                  splits, options, p_min_normal, p_half_subnormal_step(recipe), p_unit_roundoff(recipe),
                  tensor_core && problem::fp8_products_qk(q_recipe) && kv.k_scaled(),
                  tensor_core && problem::fp8_products_pv(recipe) && kv.v_scaled(),
                  options.tc_qk_order, options.tc_pv_order,
                  recipe.fp8_acc == problem::Fp8Accumulation::tc64};
  const int64_t most_splits = splits.max_ranges();

  const auto T = static_cast<std::size_t>(batch.total_q());
  const std::size_t row_values = static_cast<std::size_t>(kNumHeads) * kVDim;
  EmulatedResult r;
  r.out.assign(T * row_values, quant::f32_to_bf16(0.0f));
  r.lse.assign(T * kNumHeads, kNegInf);
  r.row_sum_rounding.assign(T * kNumHeads, 0.0f);
  if (options.keep_f32_output) r.out_f32.assign(T * row_values, 0.0f);
  if (options.capture_partials) {
    r.partial_splits = most_splits;
    r.partial_out.assign(T * static_cast<std::size_t>(most_splits) * row_values, 0.0f);
    r.partial_lse.assign(T * static_cast<std::size_t>(most_splits) * kNumHeads, kNegInf);
    r.partial_sum_rounding.assign(T * static_cast<std::size_t>(most_splits) * kNumHeads, 0.0f);
    if (options.p_flips) r.partial_p_flip.assign(T * static_cast<std::size_t>(most_splits) * row_values, 0.0f);
  }
  if (options.sensitivity) {
    r.pv_spread.assign(T * row_values, 0.0f);
    r.p_underflow.assign(T * row_values, 0.0f);
    r.pv_abs.assign(T * row_values, 0.0f);
    r.p_underflow_abs.assign(T * row_values, 0.0f);
    r.pv_spread_all.assign(T * row_values, 0.0f);
    r.pv_abs_all.assign(T * row_values, 0.0f);
    r.score_range.assign(T * kNumHeads, 0.0f);
  }
  if (options.p_flips) r.p_flip.assign(T * row_values, 0.0f);
  std::vector<int64_t> requests(options.requests.begin(), options.requests.end());
  if (options.requests.empty()) {
    requests.resize(static_cast<std::size_t>(batch.num_requests()));
    for (std::size_t b = 0; b < requests.size(); ++b) requests[b] = static_cast<int64_t>(b);
  }
  ProgressCounter counter(progress, detail::total_work_units(batch));
  const auto count = static_cast<int64_t>(requests.size());

#pragma omp parallel
  {
    Workspace ws;
    ws.qt.resize(kQkDim * kNumHeads);
    ws.rows.resize(kKeyChunk * kQkDim);
    ws.part_o.resize(static_cast<std::size_t>(most_splits) * row_values);
    ws.part_lse.resize(static_cast<std::size_t>(most_splits) * kNumHeads);
    ws.part_sum_rounding.resize(static_cast<std::size_t>(most_splits) * kNumHeads);
    if (options.p_flips) ws.part_flip.resize(static_cast<std::size_t>(most_splits) * row_values);
    // One thread computes a request start to end: the schedule cannot change a bit.
#pragma omp for schedule(dynamic, 1)
    for (int64_t k = 0; k < count; ++k) {
      const int64_t b = requests[static_cast<std::size_t>(k)];
      for (int64_t i = 0; i < batch.q_len(b); ++i) {
        const auto row = static_cast<std::size_t>(batch.qo_indptr()[b] + i);
        QueryOut qo{r.out.data() + row * row_values, r.lse.data() + row * kNumHeads};
        qo.sum_rounding = r.row_sum_rounding.data() + row * kNumHeads;
        if (options.keep_f32_output) qo.out_f32 = r.out_f32.data() + row * row_values;
        if (options.capture_partials) {
          qo.partial_out = r.partial_out.data() + row * static_cast<std::size_t>(most_splits) * row_values;
          qo.partial_lse = r.partial_lse.data() + row * static_cast<std::size_t>(most_splits) * kNumHeads;
          qo.partial_sum_rounding =
              r.partial_sum_rounding.data() + row * static_cast<std::size_t>(most_splits) * kNumHeads;
          if (options.p_flips)
            qo.partial_flip = r.partial_p_flip.data() + row * static_cast<std::size_t>(most_splits) * row_values;
        }
        if (options.sensitivity) {
          qo.spread = r.pv_spread.data() + row * row_values;
          qo.spread_abs = r.pv_abs.data() + row * row_values;
          qo.underflow = r.p_underflow.data() + row * row_values;
          qo.underflow_abs = r.p_underflow_abs.data() + row * row_values;
          qo.spread_all = r.pv_spread_all.data() + row * row_values;
          qo.abs_all = r.pv_abs_all.data() + row * row_values;
          qo.score_range = r.score_range.data() + row * kNumHeads;
        }
        if (options.p_flips) qo.flip = r.p_flip.data() + row * row_values;
        decode_query(c, b, i, ws, qo);
      }
      counter.add(detail::work_units(batch, b));
    }
  }
  return r;
}

}  // namespace mlacheck::ref
