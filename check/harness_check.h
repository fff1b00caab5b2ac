#pragma once
// The competition harness's own acceptance check (NUMERICS §6.4, utils.py verbose_allclose),
// reproduced bit for bit so reports can show its verdict next to the gate's:
//   diff = |fl32(o) - fl32(r)|                                   (float32)
//   tol  = bf16(fl32(fl32(atol) + bf16(fl32(fl32(rtol) * |r|))))  (PyTorch bf16 tensor ops)
//   an element fails if diff > tol, or exactly one of o, r is NaN, or exactly one is +Inf, or
//   exactly one is -Inf; both NaN (or both the same Inf) pass. The check passes iff none fails.
// With outputs of ~1e-4..2e-3 and atol = 1e-2 it accepts an all-zero output: the reason the gate
// has bounds of its own.
#include <cstdint>
#include <span>
#include <vector>

#include "check/layout.h"

namespace mlacheck::check {

// The final harness (0eee2d105a3b, 2026-02-12): rtol = atol = 1e-2 (NUMERICS §6.4 table).
struct HarnessTolerance {
  double rtol = 1e-2;
  double atol = 1e-2;
};

struct HarnessMismatch {
  int64_t index = 0;
  Position pos;
  float got = 0, ref = 0;
};

struct HarnessReport {
  static constexpr std::size_t kPrinted = 5;  // the harness prints the first 5 mismatches

  bool pass = true;
  int64_t mismatches = 0;
  std::vector<HarnessMismatch> first;  // the first kPrinted, in index order
  float max_error = 0;                 // torch.max(diff): NaN if any diff is NaN
  HarnessTolerance tolerance;
};

// One element's verdict: true if it fails.
bool harness_element_fails(float got, uint16_t ref_bf16, HarnessTolerance tol);

// got: the output as the harness receives it, widened to float32 (its dtype is not checked);
// ref: the bf16 reference. Same length (the harness fails a shape mismatch before this).
HarnessReport harness_check(std::span<const float> got, std::span<const uint16_t> ref_bf16,
                            const OutputLayout& layout, HarnessTolerance tol = {});

}  // namespace mlacheck::check
