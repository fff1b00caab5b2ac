#pragma once
// The tolerance policy of the gate, in one place (DESIGN.md "Three errors, not one"):
//   total error  = output - exact (fp32)      within the recipe's tolerance (total_bound)
//   kernel error = output - emulated (bf16)   within a tight bound (kernel_bound)
// Both are derived in tolerance.cpp from the recipe's formats (problem::Recipe's Q, KV and P
// formats, the bf16 output), the data's scale (DataScale) and each token's key count; no
// tolerance is typed in by hand. Each Bound carries its derivation term by term for the reports.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check/data_scale.h"
#include "check/layout.h"
#include "problem/recipe.h"
#include "quant/formats.h"

namespace mlacheck::check {

// Rounding facts of an element format with `mant_bits` stored mantissa bits and exponent `bias`.
struct Precision {
  int mant_bits = 0;
  int bias = 0;
  double unit_roundoff() const;  // 2^-(m+1): largest relative RNE error of a normal value
  double relative_step() const;  // 2^-m: largest relative spacing (one code step) of normals
  double min_normal() const;     // 2^(1-bias)
  // Half the spacing below min_normal: the largest absolute rounding error there.
  double subnormal_half_step() const;
};
Precision precision(quant::ElemFormat f);         // from quant's format table
Precision p_precision(const problem::Recipe& r);  // the recipe's P format (fp8: its variant)

// sqrt(2 ln(count / kFalseAlarmProbability)): a Gaussian error exceeds this many standard
// deviations somewhere among `count` samples with probability <= kFalseAlarmProbability (union
// bound on the tail exp(-z^2/2)).
double tail_factor(int64_t count);
inline constexpr double kFalseAlarmProbability = 1e-6;  // spurious gate failures per comparison

// One term of a derivation, e.g. {"V: kv fp8 (harness scale), relative", 0.0664}.
struct BoundTerm {
  std::string name;
  double value = 0;
};

// What a bound allows, in the affine form both bounds take. Element (t, h, d), reference value r,
// reference row RMS rho (RMS of ref over the 512 dims of row (t, h)), channel scale c_d (1 when
// channel_scale is empty):
//   |got - ref| <= elem_rel_rms[t] * rho * c_d + elem_ulps * bf16_ulp(r) + elem_abs[t]
//                  + elem_extra[i]   (i = the flat index; only bounds with a per-element term)
// and, where has_row_bound, row (t, h), with the error whitened by the channel scale:
//   RMS_d((got - ref) / c_d) <= row_rel_rms[t] * rho + row_abs[t]
// With a channel profile g_d (V's channel RMS over their mean; total bound with outlier channels),
// rho is the row's reference RMS whitened by it, RMS_d(ref_d / g_d) (reference_scale): what the
// terms scale with, w sqrt(mean m2), measured on all 512 channels alike instead of mostly on the
// few outlier channels of this one row (tolerance.cpp, "Channel profile").
struct Bound {
  std::string name;
  double elem_ulps = 0;
  std::vector<double> elem_rel_rms, elem_abs;  // per token
  bool has_row_bound = false;
  std::vector<double> row_rel_rms, row_abs;  // per token
  std::vector<double> channel_scale;         // per output dim (512), or empty: all 1
  std::vector<double> ref_profile;           // per output dim (512) g_d, or empty: all 1
  std::vector<float> elem_extra;             // per element [T, 16, 512], or empty: all 0
  std::vector<BoundTerm> terms;              // the derivation, for reports
  std::string why;                           // one line: when this bound applies

  double channel(int dim) const {
    return channel_scale.empty() ? 1.0 : channel_scale[static_cast<std::size_t>(dim)];
  }
  double element_tolerance(int64_t token, int dim, double ref, double ref_row_rms) const;
  // With the per-element term of flat element `index`.
  double element_tolerance(int64_t index, int64_t token, int dim, double ref,
                           double ref_row_rms) const;
  double row_tolerance(int64_t token, double ref_row_rms) const;  // +Inf without a row bound
  // 1 / g_d^2: the weight of ref_d^2 in the row's reference mean square (1 without a profile; a
  // channel of zero RMS, whose reference is 0 too, weighs 1).
  double reference_weight(int dim) const {
    if (ref_profile.empty()) return 1.0;
    const double g = ref_profile[static_cast<std::size_t>(dim)];
    return g > 0 ? 1 / (g * g) : 1.0;
  }
  // The rho of the tolerances for one reference row of 512 values (its finite values).
  double reference_scale(std::span<const float> ref_row) const;
};

// Relative RMS quantization error of Q, K (all 576 dims) and V (first 512) under the recipe,
// including the floors that subnormals and block scales add. Exposed for tests and reports.
double q_relative_error(const problem::Recipe& recipe, const DataScale& data);
double k_relative_error(const problem::Recipe& recipe, const DataScale& data);
double v_relative_error(const problem::Recipe& recipe, const DataScale& data);

Bound total_bound(const problem::Recipe& recipe, const DataScale& data, const OutputLayout& layout);
Bound kernel_bound(const problem::Recipe& recipe, const DataScale& data,
                   const OutputLayout& layout);
// The same with the P code flips measured instead of bounded: p_flip [T, 16, 512] from the
// emulation of the kernel's own schedule (ref/decode_emulated.h EmulationOptions::p_flips, run
// with flip_noise(recipe, data, layout)) replaces the one-flip-per-row term.
Bound kernel_bound(const problem::Recipe& recipe, const DataScale& data, const OutputLayout& layout,
                   std::span<const float> p_flip);
// How far, relative, another implementation's unrounded P can lie from the emulation's: the exp
// and per-term roundings and the score's dot product of kernel_bound, for both, z deviations.
double flip_noise(const DataScale& data, const OutputLayout& layout);

// The kernel bound when the kernel's schedule is not declared: it holds for any split plan and
// softmax tile with the recipe's formats (P rounded against any running maximum, partials merged
// in any order, exp in either base), measured against a single-pass emulation of the recipe.
// It is the worst case element by element; the gate pairs it with the schedule-free envelope
// (check/schedule_envelope.h), which bounds how far the whole output may lie from that emulation by
// what correct schedules measure on the same data.
// The emulation supplies, per element, how much re-rounding every weight can move it
// (ref/decode_emulated.h EmulationOptions::sensitivity); each span has layout.elements() values.
struct WeightSensitivity {
  std::span<const float> pv_spread, pv_abs, p_underflow, p_underflow_abs;  // [T, 16, 512]
  std::span<const float> pv_spread_all, pv_abs_all;                        // [T, 16, 512]
  std::span<const float> score_range;                                     // [T, 16]
  std::span<const float> emulated;  // the single-pass emulated output, widened
};
Bound schedule_free_bound(const problem::Recipe& recipe, const DataScale& data,
                          const OutputLayout& layout, const WeightSensitivity& sensitivity);

}  // namespace mlacheck::check
