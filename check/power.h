#pragma once
// The power report (DESIGN.md "Three errors, not one"): known-wrong outputs scored against the same
// gate and against the harness's check. check/ runs no reference: the caller (cli/, which may call
// ref/) computes the wrong outputs (one token dropped, rope dims skipped, KV scale forgotten, V
// taken from the wrong dims, a split dropped) and passes them in; the all-zero output needs no
// reference and is built here. A gate that accepts one of them is flagged, and so is a gate that
// rejects the recipe's own emulated output (a bound too tight to use).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check/gate.h"

namespace mlacheck::check {

struct WrongAnswer {
  std::string name;  // "zeros", "drop-token", ...
  std::string what;  // one line: how it was made
  // [T, 16, 512] as a kernel would compute it; scored after rounding to bf16, the output format.
  std::vector<float> output;
  // A correct output computed another way (e.g. another schedule): the gate must accept it.
  bool control = false;
  // The correct output computed the same way as `output` (a wrong answer made in the recipe's
  // numerics: the recipe's emulation), against which the bug's own effect is measured; empty: the
  // exact output.
  std::vector<float> baseline{};
  // The LSE [T, 16] (natural log) the kernel with this bug writes beside `output`, in the recipe's
  // numerics; empty where the bug defines none (zeros). Judged against the gate's reference LSE
  // (LseReference) as `compare` judges a kernel's saved LSE.
  std::vector<float> lse{};
};

// The LSE a kernel's is judged against (check/lse.h): the emulation's, with its row-sum rounding
// deltas (a kernel may sum l from its rounded P).
struct LseReference {
  std::span<const float> lse;
  std::span<const float> sum_rounding;
};

// The all-zero output of the layout's shape.
WrongAnswer all_zeros(const OutputLayout& layout);

struct PowerRow {
  std::string name, what;
  bool expected_reject = true;  // false for the control (the emulated output itself)
  bool total_rejects = false;
  std::optional<bool> kernel_rejects;  // absent without an emulated output
  bool gate_rejects = false;
  bool harness_rejects = false;
  double total_rel_fro = 0;    // ||out - exact|| / ||exact||
  double total_worst_row = 0;  // worst row error / its bound (> 1: beyond)
  int64_t kernel_beyond = 0;   // elements beyond the kernel bound
  // The bug's own effect, before the output is rounded: max over elements of |wrong - exact| in
  // bf16 ulps of the exact element. At most kVisibleUlps: the bug moves no element by more than
  // two correct kernels may differ after each rounds its output (kernel_bound's 1.5 ulps), so no
  // comparison of bf16 outputs can tell it from a correct one ("no effect" on this data, e.g.
  // dropping a key whose weight is e^-15); such rows are not scored.
  static constexpr double kVisibleUlps = 1.5;
  double effect_ulps = 0;
  bool visible() const { return !expected_reject || effect_ulps > kVisibleUlps; }
  double kernel_rel_rms = 0;  // RMS(bf16(wrong) - emulated) / RMS(emulated)
  // The answer's LSE under check_lse, where the answer has one and an LseReference was given: a
  // kernel that writes its LSE (as FlashMLA and the project's kernels do) is judged on both.
  std::optional<bool> lse_rejects;
  double lse_worst_ratio = 0;  // worst |lse - ref| / lse_tolerance
  bool rejects() const { return gate_rejects || lse_rejects.value_or(false); }
  // Rejected through its LSE alone: a kernel that writes no LSE would pass.
  bool rejected_by_lse_only() const { return !gate_rejects && lse_rejects.value_or(false); }
  bool ok() const { return visible() ? rejects() == expected_reject : true; }
};

struct PowerReport {
  std::string recipe;
  std::vector<PowerRow> rows;
  // One line per row where the gate's verdict is not the expected one.
  std::vector<std::string> warnings() const;
  bool gate_has_power() const { return warnings().empty(); }
};

// Scores each wrong answer; with an emulated output the first row is the control (the emulation
// itself, which the gate must accept). With `lse`, every answer that carries an LSE is also judged
// on it (the control's is the reference itself).
PowerReport score_power(const Gate& gate, std::span<const WrongAnswer> wrong,
                        std::optional<LseReference> lse = std::nullopt);

}  // namespace mlacheck::check
