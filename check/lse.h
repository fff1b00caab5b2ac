#pragma once
// The LSE a kernel reports against the emulated reference's (natural log, [T, 16]). Both compute
// m + log l from float32 steps; a kernel that sums the 576-term scores or the row sum in another
// order (the matrix units) moves an LSE by a few float32 ulps of its largest terms, and near 0
// (one key whose score is ~0: the dot product cancels) a float32 ulp of the value itself is far
// below that. So the tolerance is relative to |lse| + 1: |got - ref| <= kLseUnits · 2^-23 · (|ref|
// + 1). -inf (no visible key) must be -inf exactly; NaN never matches.
#include <cstddef>
#include <cstdint>
#include <span>

namespace mlacheck::check {

inline constexpr double kLseUnits = 64;

struct LseReport {
  int64_t class_mismatches = 0;  // rows where one is -inf/NaN and the other is not
  double worst_units = 0;        // max |got - ref| / (2^-23 (|ref| + 1))
  std::size_t worst_index = 0;   // token * 16 + head of the worst finite row
  float worst_got = 0, worst_ref = 0;
  bool pass() const { return class_mismatches == 0 && worst_units <= kLseUnits; }
};

LseReport check_lse(std::span<const float> got, std::span<const float> ref);

}  // namespace mlacheck::check
