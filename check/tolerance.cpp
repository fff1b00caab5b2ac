#include "check/tolerance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/core.h>

#include "check/ulp.h"
#include "problem/shape.h"
#include "quant/fp8.h"

// Notation. One output row is o = sum_j p_j v_j over the n keys a token sees (p = softmax weights,
// v_j = the 512 V dims of key j); P_j = exp(s_j - max) <= 1 are the un-normalized weights that a
// recipe may round to its P format. eps(F) = 2^-(m+1) is the unit roundoff of a format with m
// mantissa bits: RNE moves a normal value by at most eps(F) relative. u = eps(f32) = 2^-24.
//
// Error model (used by both bounds). A rounding error that is not systematic behaves like an
// independent zero-mean variable. Then an error on each term of a weighted sum adds up like
// sqrt(sum_j p_j^2 e_j^2), which is the same size the output itself has for zero-mean V:
// E[o_d^2] ~ sum_j p_j^2 v_jd^2. So a relative error eps on every V element (or on every weight)
// becomes a relative error <= eps of the output RMS, whatever n is: the gains below are 1. For V
// with a non-zero mean the output is larger and the relative error smaller, so the bound holds.
// Worst-case (all errors aligned) bounds would be sqrt(n) times larger and accept an all-zero
// output; that is the harness's atol problem (NUMERICS §6.4), not a bound worth having.

namespace mlacheck::check {
namespace {

using problem::KvFormat;
using problem::PFormat;
using problem::QFormat;

const Precision kOut = precision(quant::ElemFormat::bf16);   // the output format
const Precision kE2m1 = precision(quant::ElemFormat::e2m1);  // MXFP4 elements
const Precision kF32{23, 127};                               // IEEE binary32: u = 2^-24

// The recipe's fp8 variant (e4m3fn or e4m3fnuz: Q, KV and P alike).
struct Fp8 {
  Precision precision;
  double max;
};
Fp8 fp8_of(const problem::Recipe& r) {
  return {precision(quant::elem_format(r.fp8)), quant::fp8_max(r.fp8)};
}

// MXFP4 block exponent (NUMERICS §5.2): amax is rounded up to the next power of two iff its
// mantissa is >= 1.75, and e is two below that power, so amax / 2^e lies in [3.5, 7).
constexpr double kMxfp4ScaledAmaxMin = 1.75 * 2.0;

// Kernel-path roundings of one term p_j v_j beyond the sums (kernel_bound): the GPU's exp (CUDA
// expf / exp2f and ex2.approx: at most 2 ulp, CUDA C Programming Guide, "Mathematical Functions")
// and the host's (glibc expf: < 1 ulp); then one rounding each for the score scale product
// (q_scale * kv_scale * sm_scale), s - max, P * v, the division by the row sum and the output
// scale.
constexpr double kGpuExpUlps = 2;
constexpr double kHostExpUlps = 1;
constexpr double kTermRoundings = 5;

// --- Quantization error of one input tensor, relative to its RMS -------------------------------
//
// FP8 with a per-tensor scale s (x is stored as fp8(x / s) * s). For |x / s| >= min_normal the
// error is <= eps(fp8) |x|; below it the grid is the subnormal one and the error is <= half its
// step times s; values past the fp8 max clip (static and cast scales only: the harness and the
// dynamic scale put amax exactly at the max), by at most amax - max * s. Hence
//   RMS(err) <= eps * RMS(x) + subnormal_half_step * s + max(0, amax - max * s).
double fp8_relative(const Fp8& f, double eps, double scale, double abs_max, double rms) {
  if (rms == 0) return 0;  // an all-zero tensor quantizes exactly
  const double clip = std::max(0.0, abs_max - f.max * scale);
  return eps + (f.precision.subnormal_half_step() * scale + clip) / rms;
}

// The harness's quantize_fp8 (NUMERICS §4) rounds twice, x / s to bf16 and then to fp8, so one
// element carries (1 + e16)(1 + e8) - 1 <= eps8 + eps16 + eps8 eps16; its scale is
// s = bf16(amax / max) <= amax / max * (1 + eps16), amax over the whole tensor (scale_abs_max:
// for the cache, all 576 dims), abs_max and rms over the part whose error is wanted.
double fp8_harness_relative(const Fp8& f, double scale_abs_max, double abs_max, double rms) {
  const double e8 = f.precision.unit_roundoff(), e16 = kOut.unit_roundoff();
  return fp8_relative(f, e8 + e16 + e8 * e16, scale_abs_max / f.max * (1 + e16), abs_max, rms);
}

// MXFP4 (NUMERICS §5): x is coded as E2M1(x / 2^e) 2^e per block of 32. For |x| >= 2^e (E2M1
// normals 1..6) the error is <= eps(e2m1) |x|, clipping 6..7 included (<= 2^e < |x| / 6); below
// 2^e the grid step is 2^(e-1), so the error is <= 2^(e-2) = eps(e2m1) 2^e. So
//   err^2 <= eps^2 (x^2 + 2^(2e)),   2^e <= amax_block / 3.5:
// every element of a block carries a floor set by the block's largest element. With the block
// maxima of the data (DataScale::kv_block_amax_ms) that floor is used as measured, channel by
// channel (an outlier channel floods its block's other channels); without them, amax^2 <= 32
// RMS_block^2 (the largest square is at most the block's sum of squares) bounds the block's
// relative RMS error by eps sqrt(1 + 32 / 3.5^2), about 0.47, whatever the data.
double mxfp4_relative() {
  return kE2m1.unit_roundoff() *
         std::sqrt(1 + problem::kMxfp4Block / (kMxfp4ScaledAmaxMin * kMxfp4ScaledAmaxMin));
}

// The block floor (2^e)^2 <= amax^2 / 3.5^2, from a mean square of block maxima.
double mxfp4_floor_ms(double block_amax_ms) {
  return block_amax_ms / (kMxfp4ScaledAmaxMin * kMxfp4ScaledAmaxMin);
}

bool has_block_stats(const DataScale& d) {
  return d.kv_block_amax_ms.size() == static_cast<std::size_t>(problem::kMxfp4RowScales) &&
         d.v_channel_ms.size() == static_cast<std::size_t>(kRowLen);
}

// MXFP4 relative RMS error of the first `dims` dims of the cache from the measured block floors:
// eps sqrt(mean_d (m2_d + floor_b(d)) / mean_d m2_d), with m2 = the channels' mean squares
// (only V's are kept; for all 576 dims the cache's mean square stands in for their mean).
double mxfp4_measured_relative(const DataScale& d, int dims, double mean_sq) {
  if (mean_sq == 0) return 0;
  double floor = 0;
  for (int c = 0; c < dims; ++c)
    floor += mxfp4_floor_ms(d.kv_block_amax_ms[static_cast<std::size_t>(c / problem::kMxfp4Block)]);
  return kE2m1.unit_roundoff() * std::sqrt(1 + floor / dims / mean_sq);
}

double kv_relative(const problem::Recipe& r, double kv_abs_max, double abs_max, double rms) {
  switch (r.kv) {
    case KvFormat::bf16:
      return 0;  // the exact reference uses the same bf16 cache
    case KvFormat::fp8:
      return fp8_harness_relative(fp8_of(r), kv_abs_max, abs_max, rms);  // §4
    case KvFormat::mxfp4:
      return mxfp4_relative();
  }
  return std::numeric_limits<double>::infinity();
}

// Largest softmax weight of a token with n keys: every score lies within 2A of the largest, so
// every P_j >= exp(-2A) while the largest is 1, and p_max <= 1 / (1 + (n - 1) exp(-2A)).
double largest_weight(int64_t n, double score_bound) {
  if (n <= 1) return 1;
  return 1 / (1 + static_cast<double>(n - 1) * std::exp(-2 * score_bound));
}

// Can a P code change between two correct implementations? P lies in [exp(-2A), 1]. If that
// interval (widened by a few ulps of fp32 noise) holds no rounding midpoint of the P format, every
// P rounds to the same code in both: the largest midpoint below 1 is 1 - 2^-(m+2) (the step
// below 1 is 2^-(m+1)). With randn*0.02 data A is ~0.01, so fp8 P is always exactly 1.
bool p_code_can_flip(const Precision& p, PFormat f, double score_bound) {
  if (f == PFormat::f32) return false;  // not rounded after exp (its fp32 noise is in delta_acc)
  const double noise = (kGpuExpUlps + kHostExpUlps + kTermRoundings) * kF32.unit_roundoff();
  const double lowest_p = std::exp(-2 * score_bound) * (1 - noise);
  return lowest_p <= 1 - std::ldexp(1.0, -(p.mant_bits + 2));
}

// How much quantizing V can grow its largest element: one rounding of a normal value (the largest
// element of an MXFP4 block is in E2M1's normal range, clipping only shrinks it; the harness's fp8
// rounds twice).
double v_max_growth(const problem::Recipe& r) {
  const double e16 = kOut.unit_roundoff();
  switch (r.kv) {
    case KvFormat::bf16:
      return 1;
    case KvFormat::fp8: {
      const double e8 = fp8_of(r).precision.unit_roundoff();
      return (1 + e8) * (1 + e16);
    }
    case KvFormat::mxfp4:
      return 1 + kE2m1.unit_roundoff();
  }
  return std::numeric_limits<double>::infinity();
}

// Split partials rounded to bf16 before the LSE merge (Recipe::partial), with more than one split.
bool partials_rounded(const problem::Recipe& r) {
  return r.partial == problem::PartialFormat::bf16 && r.num_splits > 1;
}

}  // namespace

// --- Precision ----------------------------------------------------------------------------------

double Precision::unit_roundoff() const { return std::ldexp(1.0, -(mant_bits + 1)); }
double Precision::relative_step() const { return std::ldexp(1.0, -mant_bits); }
double Precision::min_normal() const { return std::ldexp(1.0, 1 - bias); }
double Precision::subnormal_half_step() const { return std::ldexp(1.0, -bias - mant_bits); }

Precision precision(quant::ElemFormat f) {
  const quant::FormatInfo info = quant::format_info(f);
  return {info.mant_bits, info.bias};
}

Precision p_precision(const problem::Recipe& r) {
  switch (r.p) {
    case PFormat::f32:
      return kF32;
    case PFormat::bf16:
      return kOut;
    case PFormat::f16:
      return {10, 15};  // IEEE binary16
    case PFormat::fp8:
      return fp8_of(r).precision;
  }
  return kF32;
}

double tail_factor(int64_t count) {
  const double n = static_cast<double>(std::max<int64_t>(count, 1));
  return std::sqrt(2 * std::log(n / kFalseAlarmProbability));
}

double q_relative_error(const problem::Recipe& r, const DataScale& d) {
  const Fp8 f = fp8_of(r);
  const double one_rounding = f.precision.unit_roundoff();
  switch (r.q) {
    case QFormat::bf16:
      return 0;  // the exact reference uses the same bf16 q
    case QFormat::fp8_harness:
      return fp8_harness_relative(f, d.q_abs_max, d.q_abs_max, d.q_rms);
    case QFormat::fp8_dynamic:  // NUMERICS §4.1: float32 scale amax / max, one rounding
      return fp8_relative(f, one_rounding, d.q_abs_max / f.max, d.q_abs_max, d.q_rms);
    case QFormat::fp8_static:
      return fp8_relative(f, one_rounding, problem::static_q_scale(r), d.q_abs_max, d.q_rms);
    case QFormat::fp8_cast:  // scale 1; past the max it saturates (or gives NaN: then anomalies)
      return fp8_relative(f, one_rounding, 1.0, d.q_abs_max, d.q_rms);
    case QFormat::mxfp4_dynamic:
      return mxfp4_relative();
    case QFormat::bf16_scaled:  // one bf16 rounding of each q x scale (normal at any data scale here)
      return precision(quant::ElemFormat::bf16).unit_roundoff();
  }
  return std::numeric_limits<double>::infinity();
}

double k_relative_error(const problem::Recipe& r, const DataScale& d) {
  if (r.kv == KvFormat::mxfp4 && has_block_stats(d))
    return mxfp4_measured_relative(d, problem::kQkDim, d.kv_rms * d.kv_rms);
  return kv_relative(r, d.kv_abs_max, d.kv_abs_max, d.kv_rms);
}

double v_relative_error(const problem::Recipe& r, const DataScale& d) {
  if (r.kv == KvFormat::mxfp4 && has_block_stats(d))
    return mxfp4_measured_relative(d, problem::kVDim, d.v_rms * d.v_rms);
  return kv_relative(r, d.kv_abs_max, d.v_abs_max, d.v_rms);
}

double Bound::element_tolerance(int64_t token, int dim, double ref, double ref_row_rms) const {
  const auto t = static_cast<std::size_t>(token);
  return elem_rel_rms[t] * ref_row_rms * channel(dim) + elem_ulps * bf16_ulp(ref) + elem_abs[t];
}

double Bound::element_tolerance(int64_t index, int64_t token, int dim, double ref,
                                double ref_row_rms) const {
  const double base = element_tolerance(token, dim, ref, ref_row_rms);
  return elem_extra.empty() ? base : base + elem_extra[static_cast<std::size_t>(index)];
}

double Bound::reference_scale(std::span<const float> ref_row) const {
  double sq = 0;
  int64_t count = 0;
  for (std::size_t d = 0; d < ref_row.size(); ++d) {
    if (!std::isfinite(ref_row[d])) continue;
    sq += static_cast<double>(ref_row[d]) * ref_row[d] * reference_weight(static_cast<int>(d));
    ++count;
  }
  return count > 0 ? std::sqrt(sq / static_cast<double>(count)) : 0.0;
}

double Bound::row_tolerance(int64_t token, double ref_row_rms) const {
  if (!has_row_bound) return std::numeric_limits<double>::infinity();
  const auto t = static_cast<std::size_t>(token);
  return row_rel_rms[t] * ref_row_rms + row_abs[t];
}

// --- Total error: output vs exact fp32 ----------------------------------------------------------
//
// Relative RMS budget of one row with n keys, the sum of what each rounding of the recipe can cost
// (a sum, not a root-sum-square: the triangle inequality holds whatever the correlations):
//   B(n) = eps(bf16)                 the output's own rounding
//        + e_V                       V quantized (gain 1, see the error model)
//        + eps(P)                    P rounded before P.V (gain 1, same argument on the weights)
//        + 2 (ds_Q + ds_K)           Q and K quantized: ds_j = sm_scale sum_d (dq_d k_d + q_d dk_d)
//                                    with independent element errors, so over keys
//                                    RMS(ds) <= sm_scale sqrt(sum_d q_d^2 E[dk_d^2]) + (same for
//                                    dq): ds_K = e_K S for per-element formats (dk_d <= e_K k_d;
//                                    S = DataScale::score_error_scale), and for MXFP4, whose
//                                    dk_d^2 <= eps^2 (k_d^2 + amax_b^2 / 3.5^2),
//                                    ds_K = eps sqrt(S^2 + S_kblock^2 / 3.5^2) (ds_Q alike). A
//                                    score error moves weight p_j by p_j (ds_j - mean ds), so the
//                                    output by <= 2 RMS(ds) of its RMS
//        + n u                       fp32 accumulation of n terms (relative to the output RMS,
//                                    which is ~sqrt(n) smaller than the sum of |terms|)
//        + eps(bf16) if split partials are stored in bf16 (Recipe::partial): the merge is a
//                                    convex combination of partials that each err by eps
// plus one absolute term where weights can underflow the P format (a score range 2A larger than
// -ln min_normal(P)): each such P_j errs by <= half a subnormal step, the row sum is >= 1, so the
// output errs by <= sqrt(n) * subnormal_half_step(P) * RMS(V) (independent errors).
// A row's RMS over 512 dims is a sample: it exceeds its expectation by the factor
// 1 + z / sqrt(2 * 512) only with probability kFalseAlarmProbability (chi distribution, z over the
// rows). An element exceeds its RMS by z (over the elements). Rows with no keys are 0 by
// convention (ref/: empty sequence -> output 0), and must be exactly 0.
//
// Channel profile: with outlier channels (DataScale::v_channel_ms) the output's channels differ in
// size like V's do. Writing m2_d for V channel d's mean square and w^2 = sum_j p_j^2, an error
// relative to each term (P, scores, output) is ~ e w sqrt(m2_d) = e w sqrt(mean(m2)) g_d in
// channel d, g_d = sqrt(m2_d / mean(m2)). The scale w sqrt(mean(m2)) is taken from the row itself:
// each ref_d / g_d has mean square w^2 mean(m2) (zero-mean V; more for V with a mean), so
// rho = RMS_d(ref_d / g_d) (Bound::reference_scale) estimates it on 512 channels alike. The plain
// row RMS has the same mean but rests on the few outlier channels: a row that happens to be small
// there (few keys, no large score to pick a large outlier value) has a plain RMS several times
// below the scale its errors have; measured, 105 of 1664 rows of a correct a16w8 output beyond the
// row bound at batch=52 kv_len=3 seed=19 q_len=2 profile=outliers page_size=2 (GpuProperty on the
// H200, then `compare` here). Relative to rho the error is e c_d with c_d = g_d. V's own error in channel d is e_V c_d for per-element formats and, for MXFP4,
// eps sqrt((m2_d + amax_b(d)^2 / 3.5^2) / mean(m2)): the block floor, large in the channels that
// share a block with an outlier. The element scale is the sum of these, written B * s_d (s_d ~ 1
// without outliers), and the row bound whitens each channel's error by s_d.
Bound total_bound(const problem::Recipe& recipe, const DataScale& data,
                  const OutputLayout& layout) {
  const double A = data.score_bound;
  const Precision p = p_precision(recipe);
  const double e_out = kOut.unit_roundoff(), e_p = p.unit_roundoff();
  const double e_q = q_relative_error(recipe, data), e_k = k_relative_error(recipe, data);
  const double e_v = v_relative_error(recipe, data);
  const bool blocks = has_block_stats(data);
  const double S = data.score_error_scale, eps4 = kE2m1.unit_roundoff();
  const double ds_q = recipe.q == QFormat::mxfp4_dynamic && blocks
                          ? eps4 * std::sqrt(S * S + mxfp4_floor_ms(data.score_q_block_scale *
                                                                    data.score_q_block_scale))
                          : e_q * S;
  const double ds_k = recipe.kv == KvFormat::mxfp4 && blocks
                          ? eps4 * std::sqrt(S * S + mxfp4_floor_ms(data.score_k_block_scale *
                                                                    data.score_k_block_scale))
                          : e_k * S;
  const double scores = 2 * (ds_q + ds_k);
  const double e_partial = partials_rounded(recipe) ? kOut.unit_roundoff() : 0.0;
  const bool p_underflows = std::exp(-2 * A) < p.min_normal();
  const auto budget = [&](int64_t n) {
    return e_out + e_v + e_p + scores + e_partial + static_cast<double>(n) * kF32.unit_roundoff();
  };
  const auto floor = [&](int64_t n) {
    if (!p_underflows || n <= 1) return 0.0;
    return std::sqrt(static_cast<double>(n)) * p.subnormal_half_step() * data.v_rms * (1 + e_v);
  };
  const double z_elem = tail_factor(layout.elements());
  const double row_factor = 1 + tail_factor(layout.rows()) / std::sqrt(2.0 * kRowLen);
  // V's flush floor (fp8 caches): an element below the format's smallest subnormal (times the
  // per-tensor scale s) rounds to 0 or to that subnormal, an absolute error of up to h s (h the
  // half subnormal step) whatever the size of its channel; the output is a weighted mean of V
  // (weights summing to 1), so it errs by at most as much from this cause. The relative budget,
  // scaled by the channel's size, does not hold it in a channel of small values with few keys:
  // RefProperty found `batch=1 kv_len=1 seed=7134691984133234 layout=ragged page_size=2` (a16w8,
  // dim 328: -1.36e-7 coded as 0 against an allowance of 6.8e-8). With randn * 0.02 data h s is
  // about 2e-7 of max|KV| (0.01 % of a typical output element).
  const double v_flush =
      recipe.kv == KvFormat::fp8
          ? fp8_of(recipe).precision.subnormal_half_step() * data.kv_abs_max / fp8_of(recipe).max *
                (1 + e_out)
          : 0.0;

  Bound b;
  b.name = "total";
  b.why = "what the recipe's number formats can cost, whatever the schedule";
  b.has_row_bound = true;
  const auto tokens = static_cast<std::size_t>(layout.tokens());
  b.elem_rel_rms.assign(tokens, 0.0);
  b.elem_abs.assign(tokens, 0.0);
  b.row_rel_rms.assign(tokens, 0.0);
  b.row_abs.assign(tokens, 0.0);
  for (std::size_t t = 0; t < tokens; ++t) {
    const int64_t n = layout.visible_kv(static_cast<int64_t>(t));
    if (n == 0) continue;  // no keys: the output is 0 by convention and must be exactly 0
    b.elem_rel_rms[t] = z_elem * budget(n);
    b.elem_abs[t] = z_elem * floor(n) + v_flush;
    b.row_rel_rms[t] = row_factor * budget(n);
    b.row_abs[t] = row_factor * floor(n);
  }
  const int64_t n_max = layout.max_visible_kv();
  if (data.v_channel_ms.size() == static_cast<std::size_t>(kRowLen)) {
    double mean = 0;
    for (double m : data.v_channel_ms) mean += m / kRowLen;
    const double others = budget(n_max) - e_v;  // every term but V's
    if (mean > 0 && budget(n_max) > 0) {
      b.channel_scale.resize(data.v_channel_ms.size());
      b.ref_profile.resize(data.v_channel_ms.size());
      for (std::size_t d = 0; d < data.v_channel_ms.size(); ++d) {
        const double m2 = data.v_channel_ms[d];
        b.ref_profile[d] = std::sqrt(m2 / mean);
        const double v_err =
            recipe.kv == KvFormat::mxfp4 && blocks
                ? eps4 * std::sqrt((m2 + mxfp4_floor_ms(
                                             data.kv_block_amax_ms[d / problem::kMxfp4Block])) /
                                   mean)
                : e_v * std::sqrt(m2 / mean);
        b.channel_scale[d] = (others * std::sqrt(m2 / mean) + v_err) / budget(n_max);
      }
    }
  }
  // The row bound whitens each channel's error by its scale c_d, so the flush floor enters it as
  // h s RMS_d(1 / c_d) (channels of scale 0 hold only zeros, which every format codes exactly).
  if (v_flush > 0) {
    double inverse_ms = 1;
    if (!b.channel_scale.empty()) {
      double sum = 0;
      int64_t count = 0;
      for (const double c : b.channel_scale)
        if (c > 0) sum += 1 / (c * c), ++count;
      inverse_ms = count > 0 ? sum / static_cast<double>(count) : 0.0;
    }
    for (std::size_t t = 0; t < tokens; ++t)
      if (layout.visible_kv(static_cast<int64_t>(t)) > 0) b.row_abs[t] += v_flush * std::sqrt(inverse_ms);
  }

  b.terms = {
      {"output rounding eps(bf16)", e_out},
      {fmt::format("V: KV {} (relative RMS)", problem::to_string(recipe.kv)), e_v},
      {fmt::format("P: {} eps", problem::to_string(recipe.p)), e_p},
      {"score range bound A = sm_scale max|q| max|k|", A},
      {"score error scale S (RMS over keys)", data.score_error_scale},
      {fmt::format("Q: {} (relative RMS)", problem::to_string(recipe.q)), e_q},
      {fmt::format("K: KV {} (relative RMS)", problem::to_string(recipe.kv)), e_k},
      {"scores: 2 (ds_Q + ds_K)", scores},
      {fmt::format("split partials: {} eps", problem::to_string(recipe.partial)), e_partial},
      {fmt::format("fp32 accumulation n u (n = {})", n_max),
       static_cast<double>(n_max) * kF32.unit_roundoff()},
      {"relative RMS budget B (longest row)", budget(n_max)},
      {"row factor 1 + z_rows / sqrt(1024)", row_factor},
      {"element tail factor z", z_elem},
  };
  if (p_underflows) b.terms.push_back({"P underflow floor (absolute, longest row)", floor(n_max)});
  if (v_flush > 0) b.terms.push_back({"V flush floor h x fp8 scale (absolute)", v_flush});
  return b;
}

// --- Kernel error: output vs the emulated recipe (both bf16) ------------------------------------
//
// Both compute the same formulas with the same roundings to the recipe's formats; they differ in
// the order of fp32 operations and in exp. Let a, b be their fp32 results before the final
// rounding and delta = |a - b|. Rounding each to bf16 moves it by <= half an ulp of its own
// binade, and g's binade is at most one above e's, so
//   |g - e| <= ulp(e) / 2 + delta + ulp(g) / 2 <= 1.5 ulp(e) + delta.
// delta, for a token with n keys (statistical, like the total bound):
// - sums in another order: n additions, each off by <= u |partial sum| (RMS u |S| / sqrt 3); the
//   partial sums of p_j v_j have RMS <= sqrt(sum p_j^2) Vmax <= sqrt(p_max) Vmax;
// - per-term roundings (exp, products, scales, the score's 576-term dot product, whose error
//   sqrt(576 / 3) u A moves the weight by that much relative) add sqrt(p_max) Vmax c u;
// - the two implementations err independently (sqrt 2) and z covers the tail over the elements:
//   delta_acc = z sqrt(2) u sqrt(p_max) Vmax (sqrt(n / 3) + c).
// - A P code can flip when P sits on a rounding midpoint and the two exps differ in the last bits;
//   one flip moves one weight by one P step, <= 2^-m p_max Vmax (m = P's mantissa bits). Flips
//   need P within a few u of a midpoint, so one per row at most (the count per row is ~n u / eps).
//   None can happen when no midpoint lies in [exp(-2A), 1] (p_code_can_flip).
// - Split partials stored in bf16 (Recipe::partial) can flip one bf16 step the same way. Partial i
//   enters the output as w_i o_i = sum over its keys of p_j v_j: about sqrt(ceil(n / S)) p_max Vmax
//   (random-sign terms, S = Recipe::num_splits), never more than Vmax; one step is 2^-7 of it.
// Vmax = max|V| times v_max_growth bounds the dequantized V the sums see.
// The bound assumes the kernel runs the emulation's schedule: another split count re-rounds P
// against another running max, a different recipe (with fp8 or mxfp4 P) by the P format's size.
double flip_noise(const DataScale& data, const OutputLayout& layout) {
  const double per_term = kGpuExpUlps + kHostExpUlps + kTermRoundings +
                          std::sqrt(problem::kQkDim / 3.0) * data.score_bound;
  return tail_factor(layout.elements()) * std::sqrt(2.0) * per_term * kF32.unit_roundoff();
}

Bound kernel_bound(const problem::Recipe& recipe, const DataScale& data, const OutputLayout& layout,
                   std::span<const float> p_flip) {
  if (p_flip.size() != static_cast<std::size_t>(layout.elements()))
    throw std::invalid_argument(fmt::format("kernel_bound: p_flip has {} values, the layout {}",
                                            p_flip.size(), layout.elements()));
  problem::Recipe no_flip_term = recipe;
  Bound b = kernel_bound(no_flip_term, data, layout);
  // Take the generic flip term back out of each token's allowance and add the measured flips.
  const Precision p = p_precision(recipe);
  const double v_max = data.v_abs_max * v_max_growth(recipe);
  const bool flips = p_code_can_flip(p, recipe.p, data.score_bound);
  for (std::size_t t = 0; t < b.elem_abs.size(); ++t) {
    const int64_t n = layout.visible_kv(static_cast<int64_t>(t));
    if (n == 0 || !flips) continue;
    b.elem_abs[t] -= p.relative_step() * largest_weight(n, data.score_bound) * v_max;
  }
  b.elem_extra.assign(p_flip.begin(), p_flip.end());
  double worst = 0;
  for (float x : p_flip) worst = std::max(worst, static_cast<double>(x));
  for (BoundTerm& term : b.terms)
    if (term.name.find("P code flip") != std::string::npos ||
        term.name.find("one P code flip") != std::string::npos)
      term = {"P code flips measured: the keys within flip_noise of a midpoint (largest, absolute)",
              worst};
  b.why += "; P code flips measured from the emulation";
  return b;
}

Bound kernel_bound(const problem::Recipe& recipe, const DataScale& data,
                   const OutputLayout& layout) {
  const double A = data.score_bound;
  const Precision p = p_precision(recipe);
  const double u = kF32.unit_roundoff();
  const double v_max = data.v_abs_max * v_max_growth(recipe);
  const double z = tail_factor(layout.elements());
  const double per_term =
      kGpuExpUlps + kHostExpUlps + kTermRoundings + std::sqrt(problem::kQkDim / 3.0) * A;
  const bool flips = p_code_can_flip(p, recipe.p, A);
  const bool partial_flips = partials_rounded(recipe);

  Bound b;
  b.name = "kernel";
  b.why = fmt::format("the emulation replays the kernel's schedule ({} splits): P rounded against "
                      "the same maxima",
                      recipe.num_splits);
  b.elem_ulps = 1.5;  // ulp(e) / 2 + ulp(g) / 2 with ulp(g) <= 2 ulp(e), derived above
  const auto tokens = static_cast<std::size_t>(layout.tokens());
  b.elem_rel_rms.assign(tokens, 0.0);
  b.elem_abs.assign(tokens, 0.0);
  double acc_longest = 0, flip_longest = 0, partial_longest = 0, p_max_longest = 1;
  const int64_t n_max = layout.max_visible_kv();
  for (std::size_t t = 0; t < tokens; ++t) {
    const int64_t n = layout.visible_kv(static_cast<int64_t>(t));
    if (n == 0) continue;  // the output is exactly 0 in both
    const double p_max = largest_weight(n, A);
    const double acc = z * std::sqrt(2.0) * u * std::sqrt(p_max) * v_max *
                       (std::sqrt(static_cast<double>(n) / 3) + per_term);
    const double flip = flips ? p.relative_step() * p_max * v_max : 0.0;
    const double per_split = std::ceil(static_cast<double>(n) / recipe.num_splits);
    const double partial =
        partial_flips ? kOut.relative_step() * std::min(1.0, std::sqrt(per_split) * p_max) * v_max
                      : 0.0;
    b.elem_abs[t] = acc + flip + partial;
    if (n == n_max)
      acc_longest = acc, flip_longest = flip, partial_longest = partial, p_max_longest = p_max;
  }
  b.terms = {
      {"final roundings (bf16 ulps of the emulated value)", b.elem_ulps},
      {fmt::format("largest weight p_max (n = {})", n_max), p_max_longest},
      {"Vmax = max|V| x (largest growth of one element in the KV format)", v_max},
      {"fp32 order and exp: delta_acc (absolute, longest row)", acc_longest},
      {flips ? fmt::format("one P code flip, 2^-{} p_max Vmax (absolute, longest row)", p.mant_bits)
             : std::string("P code flip: impossible (no rounding midpoint in [exp(-2A), 1])"),
       flip_longest},
      {fmt::format("one {} split-partial flip (absolute, longest row)",
                   problem::to_string(recipe.partial)),
       partial_longest},
      {"element tail factor z", z},
  };
  return b;
}

// --- Kernel error with no declared schedule ------------------------------------------------------
//
// The kernel may cut the keys into any splits and softmax steps. Against the single-pass emulation
// e (one step over the row: P_j = b^(s_j - max) rounded once, l the unrounded sum), it differs by:
// - everything kernel_bound allows for a kernel of the same schedule (final roundings, delta_acc),
//   with per_term widened by the roundings another schedule adds: exp in the other base
//   (x = s log2 e - m log2 e: three more roundings of size <= u A log2 e, i.e. 3 u A of the
//   weight) and the LSE merge (each partial's lse = m + ln l rounded, and w = b^(lse - M):
//   2 (A + ln n + 1) u of the weight);
// - P re-rounded. The kernel rounds P_j c_j (c_j = b^(m - m_r), m_r its running max when key j
//   was seen) instead of P_j: where c_j != 1 the two roundings are unrelated, each moving P_j by
//   <= eps(P) P_j (normal range) or, below the smallest normal, by <= min(h, P_j) (h =
//   subnormal_half_step(P); 0 is a grid point, and c_j >= 1 only shrinks the kernel's error in
//   units of the row max). The key at the row max has P = b^0 = 1 in every schedule and is left
//   out. Taken as independent zero-mean errors d_j (the error model of the total bound), the
//   output moves by sum_j d_j v_j / l, whose standard deviation is <= sqrt(2) (eps(P) pv_spread +
//   p_underflow) per element (ref/decode_emulated.h: pv_spread = sqrt(sum_j w_j^2 v_j^2), or with
//   v_j - o when the kernel sums l from rounded P; p_underflow with min(h, P_j)). A P code can
//   only change where [e^-range, e^range] (range = the row's measured score range, every P of
//   every schedule lies there) holds a midpoint of the P format.
// - The same code, scaled: keys whose P_j c_j round to the same code C carry C / c_j instead of C.
//   c_j is shared by a group of keys (a split, a tile), so these errors are correlated within a
//   group: at most min(2 eps(P), 1 - e^-range) of the weight (c_j lies in [1, e^range]), summed
//   over groups g as sum_g d_g a_g with a_g = sum over g of w_j v_j, whose square summed over the
//   groups is <= pv_spread^2 + o^2 (as for the partials below): sqrt(2) d sqrt(spread^2 + o^2).
//   With fp8 P on data of small score range every P rounds to 1 and this is the whole effect.
// - Split partials stored in bf16 (Recipe::partial): partial s is rounded by <= eps(bf16) of its
//   value; its share of the output, sum over its keys of w_j v_j, has a square summed over the
//   splits of <= pv_spread_all^2 + o^2 (random-sign terms add per key; a common mean adds up to
//   o^2 at most), so sqrt(2) eps(bf16) sqrt(pv_spread_all^2 + o^2). The keys at the row max count
//   here (pv_spread_all, pv_abs_all): a partial rounds their share too. They are the whole row
//   when Q is coded so coarsely that every score ties (a8w8-cast on small Q: RefProperty drew a
//   row whose non-max keys held a fifth of |o|, and 2 eps(bf16) of that was below one ulp).
// z (the element tail factor) turns the standard deviations into a bound over every element.
// When a few keys carry the weight (peaked rows), z sqrt 2 standard deviations exceed what the
// errors can add up to at all; the worst case, every per-key error at its largest and aligned,
// is then the smaller: E (pv_abs + |o|) + 2 p_underflow_abs (+ 2 eps(bf16) pv_abs_all for bf16
// partials), with E = 2 eps(P) where a midpoint lies in reach, else the shared-code term alone
// (pv_abs = sum_j w_j |v_j|; |o| covers kernels that sum l from rounded P). The bound takes the
// smaller of the two per element.
Bound schedule_free_bound(const problem::Recipe& recipe, const DataScale& data,
                          const OutputLayout& layout, const WeightSensitivity& sens) {
  const auto n_elem = static_cast<std::size_t>(layout.elements());
  if (sens.pv_spread.size() != n_elem || sens.p_underflow.size() != n_elem ||
      sens.pv_abs.size() != n_elem || sens.p_underflow_abs.size() != n_elem ||
      sens.pv_spread_all.size() != n_elem || sens.pv_abs_all.size() != n_elem ||
      sens.emulated.size() != n_elem || sens.score_range.size() != n_elem / kRowLen)
    throw std::invalid_argument(fmt::format(
        "schedule_free_bound: sensitivity has {} / {} / {} values, the layout {} elements",
        sens.pv_spread.size(), sens.p_underflow.size(), sens.emulated.size(), n_elem));
  const double A = data.score_bound;
  const Precision p = p_precision(recipe);
  const double u = kF32.unit_roundoff();
  const double v_max = data.v_abs_max * v_max_growth(recipe);
  const double z = tail_factor(layout.elements());
  const double other_base = 3 * A;
  const bool partials = recipe.partial == problem::PartialFormat::bf16;
  const double eps_p = recipe.p == PFormat::f32 ? 0.0 : p.unit_roundoff();
  const double eps_partial = partials ? kOut.unit_roundoff() : 0.0;

  Bound b;
  b.name = "kernel (schedule-free)";
  b.why = "no --schedule declared: holds for any split plan and softmax tile of the recipe";
  b.elem_ulps = 1.5;  // as kernel_bound
  const auto tokens = static_cast<std::size_t>(layout.tokens());
  b.elem_rel_rms.assign(tokens, 0.0);
  b.elem_abs.assign(tokens, 0.0);
  double acc_longest = 0;
  const int64_t n_max = layout.max_visible_kv();
  for (std::size_t t = 0; t < tokens; ++t) {
    const int64_t n = layout.visible_kv(static_cast<int64_t>(t));
    if (n == 0) continue;
    const double p_max = largest_weight(n, A);
    const double merge = 2 * (A + std::log(static_cast<double>(n)) + 1);
    const double per_term = kGpuExpUlps + kHostExpUlps + kTermRoundings +
                            std::sqrt(problem::kQkDim / 3.0) * A + other_base + merge;
    b.elem_abs[t] = z * std::sqrt(2.0) * u * std::sqrt(p_max) * v_max *
                    (std::sqrt(static_cast<double>(n) / 3) + per_term);
    if (n == n_max) acc_longest = b.elem_abs[t];
  }
  b.elem_extra.resize(n_elem);
  double worst_p = 0, worst_group = 0, worst_partial = 0;
  int64_t rows_with_midpoint = 0;
  const bool rounded = recipe.p != PFormat::f32;
  const double noise = (kGpuExpUlps + kHostExpUlps + kTermRoundings) * u;
  for (std::size_t row = 0; row < n_elem / kRowLen; ++row) {
    const double range = sens.score_range[row];
    const double lowest = std::exp(-range) * (1 - noise), highest = std::exp(range) * (1 + noise);
    const bool midpoint = rounded && (lowest <= 1 - std::ldexp(1.0, -(p.mant_bits + 2)) ||
                                      highest >= 1 + std::ldexp(1.0, -(p.mant_bits + 1)));
    rows_with_midpoint += midpoint ? 1 : 0;
    const double eps_ind = midpoint ? eps_p : 0.0;
    const double eps_group =
        rounded ? std::min(2 * eps_p, (1 - std::exp(-range)) * (1 + eps_p)) : 0.0;
    // The largest weight error per key of the worst case: two unrelated roundings where a
    // midpoint lies in reach, else the scaling of one shared code.
    const double per_key_worst = midpoint ? 2 * eps_p : eps_group;
    for (std::size_t i = row * kRowLen; i < (row + 1) * kRowLen; ++i) {
      const double spread = sens.pv_spread[i], o = std::fabs(sens.emulated[i]);
      const double with_mean = std::sqrt(spread * spread + o * o);
      const double spread_all = sens.pv_spread_all[i];
      const double all_with_mean = std::sqrt(spread_all * spread_all + o * o);
      const double gaussian =
          z * std::sqrt(2.0) *
          (eps_ind * spread + sens.p_underflow[i] + eps_group * with_mean +
           (partials ? eps_partial * all_with_mean : 0.0));
      const double worst = per_key_worst * (sens.pv_abs[i] + o) + 2 * sens.p_underflow_abs[i] +
                           (partials ? 2 * eps_partial * sens.pv_abs_all[i] : 0.0);
      const double extra = std::min(gaussian, worst);
      b.elem_extra[i] = static_cast<float>(extra);
      worst_p = std::max(worst_p, extra);
      worst_group = std::max(worst_group, worst < gaussian ? worst : 0.0);
      worst_partial = std::max(worst_partial, gaussian <= worst ? gaussian : 0.0);
    }
  }
  b.terms = {
      {"final roundings (bf16 ulps of the emulated value)", b.elem_ulps},
      {"Vmax = max|V| x (largest growth of one element in the KV format)", v_max},
      {"fp32 order, exp in either base, LSE merge: delta_acc (absolute, longest row)",
       acc_longest},
      {fmt::format("P re-rounded, eps(P) = 2^-{}; {} of {} rows with a midpoint in "
                   "[e^-range, e^range]; {} partials: min(statistical, worst case) (largest, "
                   "absolute)",
                   p.mant_bits + 1, rows_with_midpoint, n_elem / kRowLen,
                   problem::to_string(recipe.partial)),
       worst_p},
      {"  where the worst case is the smaller (largest such, absolute)", worst_group},
      {"  where the statistical bound is the smaller (largest such, absolute)", worst_partial},
      {"element tail factor z", z},
  };
  return b;
}

}  // namespace mlacheck::check
