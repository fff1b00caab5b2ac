#include "naive_decode.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "ref/detmath.h"

namespace mlacheck::ref::test {
namespace {

constexpr int H = problem::kNumHeads, D = problem::kQkDim, DV = problem::kVDim;

float bf16v(uint16_t b) { return quant::bf16_to_f32(b); }

}  // namespace

NaiveExact naive_exact(const problem::Batch& batch, std::span<const uint16_t> q,
                       std::span<const uint16_t> kv) {
  NaiveExact r;
  r.out.assign(static_cast<std::size_t>(batch.total_q()) * H * DV, 0.0L);
  r.lse.assign(static_cast<std::size_t>(batch.total_q()) * H,
               -std::numeric_limits<long double>::infinity());
  for (int64_t b = 0; b < batch.num_requests(); ++b)
    for (int64_t i = 0; i < batch.q_len(b); ++i) {
      const int64_t row = batch.qo_indptr()[b] + i;
      const int64_t n = batch.visible_kv(b, i);
      if (n == 0) continue;
      for (int h = 0; h < H; ++h) {
        const uint16_t* qh = &q[(row * H + h) * D];
        std::vector<long double> s(n);
        long double m = -std::numeric_limits<long double>::infinity();
        for (int64_t t = 0; t < n; ++t) {
          const uint16_t* k = &kv[batch.kv_row(b, t) * D];
          long double dot = 0;
          for (int d = 0; d < D; ++d) dot += static_cast<long double>(bf16v(qh[d])) * bf16v(k[d]);
          s[t] = dot / 24.0L;
          m = std::max(m, s[t]);
        }
        long double l = 0;
        for (int64_t t = 0; t < n; ++t) l += std::exp(s[t] - m);
        for (int64_t t = 0; t < n; ++t) {
          const long double p = std::exp(s[t] - m) / l;
          const uint16_t* v = &kv[batch.kv_row(b, t) * D];
          for (int c = 0; c < DV; ++c) r.out[(row * H + h) * DV + c] += p * bf16v(v[c]);
        }
        r.lse[row * H + h] = m + std::log(l);
      }
    }
  return r;
}

namespace {

// Q values and scale per recipe, straight from quant/ (decode_emulated.h step 1).
std::vector<float> q_values(std::span<const uint16_t> q, const problem::Recipe& rc, float& scale,
                            bool& scaled) {
  std::vector<float> x(q.size()), v(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = bf16v(q[i]);
  std::vector<uint8_t> codes(q.size());
  scale = 1.0f;
  scaled = true;
  switch (rc.q) {
    case problem::QFormat::bf16: scaled = false; return x;
    case problem::QFormat::bf16_scaled: {  // q x the softmax scale, rounded to bf16
      scaled = false;
      const float c = rc.base == problem::SoftmaxBase::e ? static_cast<float>(1.0 / 24.0)
                                                           : static_cast<float>(1.4426950408889634 / 24.0);
      for (std::size_t i = 0; i < q.size(); ++i) v[i] = bf16v(quant::f32_to_bf16(x[i] * c));
      return v;
    }
    case problem::QFormat::fp8_harness: scale = quant::fp8_harness_quantize(q, rc.fp8, codes); break;
    case problem::QFormat::fp8_dynamic:
      scale = quant::fp8_dynamic_quantize(x, D, rc.fp8, codes);
      break;
    case problem::QFormat::fp8_static:
      scale = problem::static_q_scale(rc);
      quant::fp8_static_quantize(x, scale, rc.fp8, codes);
      break;
    case problem::QFormat::fp8_cast:
      scaled = false;
      quant::fp8_cast(x, rc.fp8, rc.q_cast_overflow, codes);
      break;
    case problem::QFormat::mxfp4_dynamic: {
      scaled = false;
      std::vector<uint8_t> packed(q.size() / 2), sc(q.size() / 32);
      quant::mxfp4_quantize(x, D, rc.mxfp4_rounding, packed, sc);
      for (std::size_t i = 0; i < q.size(); ++i)
        v[i] = quant::e2m1_to_f32(i % 2 == 0 ? packed[i / 2] & 0xF : packed[i / 2] >> 4) *
               quant::e8m0_to_f32(sc[i / 32]);
      return v;
    }
  }
  for (std::size_t i = 0; i < q.size(); ++i) v[i] = quant::fp8_to_f32(codes[i], rc.fp8);
  return v;
}

float key_value(const problem::KvCache& c, int64_t row, int d) {
  switch (c.format) {
    case problem::KvFormat::bf16: return bf16v(c.bf16[row * D + d]);
    case problem::KvFormat::fp8: return quant::fp8_to_f32(c.fp8[row * D + d], c.fp8_format);
    case problem::KvFormat::mxfp4: {
      const uint8_t byte = c.mxfp4[row * (D / 2) + d / 2];
      return quant::e2m1_to_f32(d % 2 == 0 ? byte & 0xF : byte >> 4) *
             quant::e8m0_to_f32(c.mxfp4_scale[row * (D / 32) + d / 32]);
    }
  }
  return 0;
}

// V in the P·V operand type: bf16 / fp16 when P is one of those.
float round_p(problem::PFormat p, quant::Fp8Format f, float x) {
  switch (p) {
    case problem::PFormat::f32: return x;
    case problem::PFormat::bf16: return bf16v(quant::f32_to_bf16(x));
    case problem::PFormat::f16: {
      // Independent fp16 rounding: nearest even on a 2^-24-spaced grid below 2^-14, 11 bits above.
      if (std::isnan(x)) return x;
      const float a = std::fabs(x);
      if (a >= 65520.0f) return std::copysign(std::numeric_limits<float>::infinity(), x);
      int e;
      std::frexp(a, &e);  // a = f·2^e, f in [0.5, 1)
      const int quantum = std::max(e - 11, -24);
      const float r = std::nearbyint(std::ldexp(a, -quantum));  // ties to even (default mode)
      return std::copysign(std::ldexp(r, quantum), x);
    }
    case problem::PFormat::fp8: return quant::fp8_to_f32(quant::f32_to_fp8(x, f), f);
  }
  return x;
}

float expb(problem::SoftmaxBase b, float x) {
  return static_cast<float>(b == problem::SoftmaxBase::e ? detmath::exp(x) : detmath::exp2(x));
}
float logb(problem::SoftmaxBase b, float x) {
  return static_cast<float>(b == problem::SoftmaxBase::e ? detmath::log(x) : detmath::log2(x));
}

}  // namespace

NaiveEmulated naive_emulated(const problem::Batch& batch, std::span<const uint16_t> q,
                             const problem::KvCache& cache, const problem::Recipe& rc,
                             int num_splits_arg, int chunk_keys) {
  const float inf = std::numeric_limits<float>::infinity();
  float q_scale;
  bool q_scaled;
  const std::vector<float> qv = q_values(q, rc, q_scale, q_scaled);
  const bool kv_scaled = cache.format == problem::KvFormat::fp8;
  float score_scale = rc.base == problem::SoftmaxBase::e ? static_cast<float>(1.0 / 24.0)
                                                         : static_cast<float>(1.4426950408889634 / 24.0);
  if (rc.q == problem::QFormat::bf16_scaled) score_scale = 1.0f;  // carried by q
  if (q_scaled) score_scale *= q_scale;
  if (kv_scaled) score_scale *= cache.fp8_scale;

  NaiveEmulated r;
  r.out.assign(static_cast<std::size_t>(batch.total_q()) * H * DV, 0);
  r.lse.assign(static_cast<std::size_t>(batch.total_q()) * H, 0.0f);
  for (int64_t b = 0; b < batch.num_requests(); ++b)
    for (int64_t i = 0; i < batch.q_len(b); ++i) {
      const int64_t row = batch.qo_indptr()[b] + i;
      const int64_t n = batch.visible_kv(b, i), len = batch.kv_len(b);
      // A chunked plan: this request's own split count, ceil(len / chunk) in 1 .. 256.
      const int num_splits =
          chunk_keys > 0 ? static_cast<int>(std::clamp<int64_t>((len + chunk_keys - 1) / chunk_keys, 1, 256))
                         : num_splits_arg;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      if (num_splits == 0) {
        ranges.push_back({0, len});
      } else {
        const int64_t per = (len + num_splits - 1) / num_splits;
        for (int s = 0; s < num_splits; ++s) {
          const int64_t a = std::min(s * per, len);
          ranges.push_back({a, std::min(a + per, len)});
        }
      }
      for (int h = 0; h < H; ++h) {
        const float* qh = &qv[(row * H + h) * D];
        std::vector<std::vector<float>> parts_o;
        std::vector<float> parts_lse;
        for (const auto& [a, e] : ranges) {
          std::vector<float> o(DV, 0.0f);
          const int64_t end = std::min(e, n);
          if (end <= a) {
            parts_o.push_back(o);
            parts_lse.push_back(-inf);
            continue;
          }
          const int64_t step = rc.softmax_tile > 0 ? rc.softmax_tile : e - a;
          float m = -inf, l = 0.0f;
          std::vector<float> acc(DV, 0.0f);
          for (int64_t t0 = a; t0 < end; t0 += step) {
            const int64_t t1 = std::min(t0 + step, end);
            std::vector<float> s;
            float m_new = m;
            for (int64_t t = t0; t < t1; ++t) {
              float dot = 0.0f;
              for (int d = 0; d < D; ++d) dot += qh[d] * key_value(cache, batch.kv_row(b, t), d);
              s.push_back(dot * score_scale);
              m_new = std::max(m_new, s.back());
            }
            const float alpha = expb(rc.base, m - m_new);
            float sum = 0.0f;
            for (float& x : s) {
              const float p = expb(rc.base, x - m_new);
              sum += p;
              x = round_p(rc.p, rc.fp8, p);
            }
            l = l * alpha + sum;
            for (float& x : acc) x *= alpha;
            const bool round_v = rc.p == problem::PFormat::bf16 || rc.p == problem::PFormat::f16;
            for (int64_t t = t0; t < t1; ++t)
              for (int c = 0; c < DV; ++c) {
                const float v = key_value(cache, batch.kv_row(b, t), c);
                acc[c] += s[t - t0] * (round_v ? round_p(rc.p, rc.fp8, v) : v);
              }
            m = m_new;
          }
          for (int c = 0; c < DV; ++c) {
            o[c] = acc[c] / l;
            if (kv_scaled) o[c] *= cache.fp8_scale;
            if (num_splits > 0 && rc.partial == problem::PartialFormat::bf16)
              o[c] = bf16v(quant::f32_to_bf16(o[c]));
          }
          parts_o.push_back(o);
          parts_lse.push_back(m + logb(rc.base, l));
        }
        float lse;
        std::vector<float> out(DV, 0.0f);
        if (num_splits == 0) {
          lse = parts_lse[0];
          out = parts_o[0];
        } else {
          float big = -inf;
          for (float x : parts_lse) big = std::max(big, x);
          if (big == -inf) {
            lse = -inf;
          } else {
            std::vector<float> w;
            float total = 0.0f;
            for (float x : parts_lse) {
              w.push_back(expb(rc.base, x - big));
              total += w.back();
            }
            for (int c = 0; c < DV; ++c) {
              float acc = 0.0f;
              for (std::size_t s = 0; s < w.size(); ++s) acc += w[s] * parts_o[s][c];
              out[c] = acc / total;
            }
            lse = big + logb(rc.base, total);
          }
        }
        for (int c = 0; c < DV; ++c) r.out[(row * H + h) * DV + c] = quant::f32_to_bf16(out[c]);
        r.lse[row * H + h] = rc.base == problem::SoftmaxBase::e
                                 ? lse
                                 : static_cast<float>(static_cast<double>(lse) * 0.6931471805599453);
      }
    }
  return r;
}

}  // namespace mlacheck::ref::test
