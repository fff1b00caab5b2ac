#pragma once
// The LSE a kernel reports against the emulated reference's (natural log, [T, 16]). Both compute
// m + log l from float32 steps. Two parts of the tolerance:
// - the score: a kernel that sums the 576-term scores in another order (the matrix units) moves an
//   LSE by a few float32 ulps of its largest terms, and near 0 (one key whose score is ~0: the dot
//   product cancels) a float32 ulp of the value itself is far below that, so kLseUnits · 2^-23 ·
//   (|ref| + 1);
// - the row sum l = sum of n positive terms: any grouping of a float32 sum lies within gamma(k) l
//   of the exact one (Higham, Accuracy and Stability of Numerical Algorithms, §4.2; gamma(k) =
//   k u / (1 - k u), u = 2^-24), the merge of S splits adding S terms, so two schedules' LSEs may
//   differ by ln(1 + 2 gamma(n + S)); with S <= n for any split plan, k = 2n. Measured need: at
//   batch=10 kv_len=4096 seed=0 profile=peaked page_size=2, 7 splits and one pass of a16w16 differ
//   by 64.6 units (thousands of p ~ e^-15 added to l ~ 1 round the same way each time; RefProperty).
// -inf (no visible key) must be -inf exactly; NaN never matches.
#include <cstddef>
#include <cstdint>
#include <span>

#include "check/layout.h"

namespace mlacheck::check {

inline constexpr double kLseUnits = 64;

// The allowed |got - ref| of one LSE of a row with `keys` visible keys.
double lse_tolerance(double ref, int64_t keys);

struct LseReport {
  int64_t class_mismatches = 0;  // rows where one is -inf/NaN and the other is not
  int64_t beyond = 0;            // finite rows beyond lse_tolerance
  double worst_ratio = 0;        // max |got - ref| / lse_tolerance
  double worst_units = 0;        // at the worst row: |got - ref| / (2^-23 (|ref| + 1))
  double worst_allowed_units = kLseUnits;  // lse_tolerance there, in the same units
  std::size_t worst_index = 0;   // token * 16 + head of the worst finite row
  float worst_got = 0, worst_ref = 0;
  bool pass() const { return class_mismatches == 0 && beyond == 0; }
};

// got and ref hold layout.rows() values; row t * 16 + h has layout.visible_kv(t) keys.
LseReport check_lse(std::span<const float> got, std::span<const float> ref, const OutputLayout& layout);

}  // namespace mlacheck::check
