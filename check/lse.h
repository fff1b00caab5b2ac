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
// - where the caller passes one (compare and drift: a kernel written anywhere), the rounding of P
//   in a row sum of rounded P: a kernel may sum l from the P it multiplies V by (rounded to the
//   recipe's P format) instead of the unrounded P, which moves l by at most a relative delta
//   (ref/decode_emulated.h row_sum_rounding), so its LSE by -ln(1 - delta). With bf16 P on rows
//   whose weight is spread over many keys that is up to 2^-8 (about 2000 units at |lse| ~ 1), so
//   the LSE then catches base or scale mix-ups, not errors of that size. verify does not pass it:
//   the project's kernels sum the unrounded P.
// -inf (no visible key) must be -inf exactly; NaN never matches.
#include <cstddef>
#include <cstdint>
#include <span>

#include "check/layout.h"

namespace mlacheck::check {

inline constexpr double kLseUnits = 64;

// The allowed |got - ref| of one LSE of a row with `keys` visible keys; sum_rounding: the row's
// relative row-sum rounding delta (0: the kernel sums the unrounded P).
double lse_tolerance(double ref, int64_t keys, double sum_rounding = 0);

struct LseReport {
  int64_t class_mismatches = 0;  // rows where one is -inf/NaN and the other is not
  int64_t beyond = 0;            // finite rows beyond lse_tolerance
  double worst_ratio = 0;        // max |got - ref| / lse_tolerance
  double worst_units = 0;        // at the worst row: |got - ref| / (2^-23 (|ref| + 1))
  double worst_allowed_units = kLseUnits;  // lse_tolerance there, in the same units
  std::size_t worst_index = 0;   // token * 16 + head of the worst finite row
  bool row_sum_rounding = false;  // the tolerance includes the rounded-P row sum term
  float worst_got = 0, worst_ref = 0;
  bool pass() const { return class_mismatches == 0 && beyond == 0; }
};

// got and ref hold layout.rows() values; row t * 16 + h has layout.visible_kv(t) keys.
// sum_rounding: empty, or layout.rows() deltas (EmulatedResult::row_sum_rounding) admitting a
// kernel that sums the row sum from rounded P.
LseReport check_lse(std::span<const float> got, std::span<const float> ref, const OutputLayout& layout,
                    std::span<const float> sum_rounding = {});

}  // namespace mlacheck::check
