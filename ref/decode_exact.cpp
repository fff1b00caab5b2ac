#include "ref/decode_exact.h"

#include <algorithm>
#include <limits>

#include "problem/shape.h"
#include "quant/bf16.h"
#include "ref/decode_common.h"
#include "ref/detmath.h"
#include "ref/kernels.h"
#include "ref/progress_counter.h"

namespace mlacheck::ref {
namespace {

using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
using detail::kKeyChunk;

// Per-thread buffers, reused across requests so that memory stays at a few MB per thread
// whatever the batch: the cache is read a chunk of keys at a time, never copied whole.
struct Workspace {
  std::vector<double> qt;    // [576, 16]  Qᵀ of one query (the heads side by side)
  std::vector<double> rows;  // [chunk, 576]  keys of a chunk, or [chunk, 512] their V
  std::vector<double> s;     // [n, 16]  Sᵀ: scores, then probabilities, of the visible keys
  std::vector<double> o;     // [16, 512]  Σ p·v
};

// Keys t0 .. t0+n-1 of request b as doubles, `width` (576 or 512) values per row.
void decode_rows(const problem::Batch& batch, int64_t b, int64_t t0, int64_t n,
                 std::span<const uint16_t> kv, int width, double* out) {
  for (int64_t j = 0; j < n; ++j) {
    const uint16_t* row = kv.data() + batch.kv_row(b, t0 + j) * kQkDim;
    for (int d = 0; d < width; ++d) out[j * width + d] = quant::bf16_to_f32(row[d]);
  }
}

// Query i of request b (16 heads): out [16, 512] and lse [16].
void decode_query(const problem::Batch& batch, int64_t b, int64_t i, std::span<const uint16_t> q,
                  std::span<const uint16_t> kv, const Kernels& k, Workspace& ws, float* out,
                  float* lse) {
  const int64_t n = batch.visible_kv(b, i);
  if (n == 0) {
    std::fill(out, out + kNumHeads * kVDim, 0.0f);
    std::fill(lse, lse + kNumHeads, -std::numeric_limits<float>::infinity());
    return;
  }
  const uint16_t* qrow = q.data() + (batch.qo_indptr()[b] + i) * kNumHeads * kQkDim;
  for (int h = 0; h < kNumHeads; ++h)
    for (int d = 0; d < kQkDim; ++d) ws.qt[d * kNumHeads + h] = quant::bf16_to_f32(qrow[h * kQkDim + d]);

  // Sᵀ[t][h] = Σ_d k_t[d]·q_h[d], in order of d.
  ws.s.assign(static_cast<std::size_t>(n) * kNumHeads, 0.0);
  for (int64_t t0 = 0; t0 < n; t0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - t0);
    decode_rows(batch, b, t0, nc, kv, kQkDim, ws.rows.data());
    k.gemm_f64(nc, kNumHeads, kQkDim, ws.rows.data(), kQkDim, 1, ws.qt.data(), kNumHeads,
               ws.s.data() + t0 * kNumHeads, kNumHeads);
  }

  // Softmax of the scaled scores. The loops run over t outside and the heads inside (so they
  // vectorize across heads); each head's max and sum still go in order of t.
  double m[kNumHeads], l[kNumHeads];
  std::fill(m, m + kNumHeads, -std::numeric_limits<double>::infinity());
  std::fill(l, l + kNumHeads, 0.0);
  double* s = ws.s.data();
  for (int64_t t = 0; t < n; ++t)
    for (int h = 0; h < kNumHeads; ++h) {
      s[t * kNumHeads + h] *= problem::kSmScale;
      m[h] = std::max(m[h], s[t * kNumHeads + h]);
    }
  for (int64_t t = 0; t < n; ++t)
    for (int h = 0; h < kNumHeads; ++h) s[t * kNumHeads + h] -= m[h];
  k.exp_f64(n * kNumHeads, s, s, false);
  for (int64_t t = 0; t < n; ++t)
    for (int h = 0; h < kNumHeads; ++h) l[h] += s[t * kNumHeads + h];

  // o[h][c] = Σ_t p[h][t]·v_t[c], in order of t (the chunks are added in order); Pᵀ is read
  // column-wise as A(h, t) = s[t·16 + h].
  ws.o.assign(static_cast<std::size_t>(kNumHeads) * kVDim, 0.0);
  for (int64_t t0 = 0; t0 < n; t0 += kKeyChunk) {
    const int64_t nc = std::min(kKeyChunk, n - t0);
    decode_rows(batch, b, t0, nc, kv, kVDim, ws.rows.data());
    k.gemm_f64(kNumHeads, kVDim, nc, s + t0 * kNumHeads, 1, kNumHeads, ws.rows.data(), kVDim,
               ws.o.data(), kVDim);
  }
  for (int h = 0; h < kNumHeads; ++h) {
    for (int c = 0; c < kVDim; ++c)
      out[h * kVDim + c] = static_cast<float>(ws.o[h * kVDim + c] / l[h]);
    lse[h] = static_cast<float>(m[h] + detmath::log(l[h]));
  }
}

}  // namespace

ExactResult decode_exact(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                         std::span<const uint16_t> kv_bf16, Progress* progress) {
  detail::check_q(batch, q_bf16.size());
  detail::check_cache_size(batch, "kv (bf16)", kv_bf16.size(), kQkDim);
  ExactResult r;
  r.out.resize(static_cast<std::size_t>(batch.total_q()) * kNumHeads * kVDim);
  r.lse.resize(static_cast<std::size_t>(batch.total_q()) * kNumHeads);
  const Kernels& k = kernels();
  ProgressCounter counter(progress, detail::total_work_units(batch));
  const int64_t requests = batch.num_requests();

#pragma omp parallel
  {
    Workspace ws;
    ws.qt.resize(kQkDim * kNumHeads);
    ws.rows.resize(kKeyChunk * kQkDim);
    // Requests are independent and each is computed start to end by one thread, so the schedule
    // cannot change a bit; dynamic balances ragged batches.
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < requests; ++b) {
      for (int64_t i = 0; i < batch.q_len(b); ++i) {
        const int64_t row = batch.qo_indptr()[b] + i;
        decode_query(batch, b, i, q_bf16, kv_bf16, k, ws, r.out.data() + row * kNumHeads * kVDim,
                     r.lse.data() + row * kNumHeads);
      }
      counter.add(detail::work_units(batch, b));
    }
  }
  return r;
}

}  // namespace mlacheck::ref
