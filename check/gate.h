#pragma once
// The gate (DESIGN.md "Three errors, not one"): an output passes iff its total error (vs the exact
// fp32 output) is within the recipe's total bound AND its kernel error (vs the recipe's emulated
// bf16 output) is within the kernel bound. The harness's own check (NUMERICS §6.4) is evaluated
// beside them, so reports show both verdicts; it never decides the gate.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check/harness_check.h"
#include "check/layout.h"
#include "check/metrics.h"
#include "check/schedule_envelope.h"
#include "check/tolerance.h"
#include "problem/recipe.h"

namespace mlacheck::check {

// Rows of tokens that see no key. zero: the project's convention (out 0, lse -inf), judged like
// every row. any: a third-party kernel may leave them undefined (the Triton kernels measured write
// NaN, FlashMLA an LSE of +inf): they are not judged, and the report counts them.
enum class EmptyRows : uint8_t { zero, any };

struct GateOptions {
  HarnessTolerance harness{};
  std::optional<Bound> kernel;  // replaces kernel_bound(recipe), e.g. schedule_free_bound
  EmptyRows empty_rows = EmptyRows::zero;
  // No declared schedule: the output must also lie within the envelope of these correct
  // schedules around the emulated (single-pass) output (check/schedule_envelope.h).
  std::optional<EnvelopeControls> envelope;
};

struct GateReport {
  std::string recipe;
  int64_t skipped_empty_rows = 0;  // (token, head) rows not judged (EmptyRows::any)
  Bound total_bound, kernel_bound;
  Metrics total;                  // output vs exact, under total_bound
  std::optional<Metrics> kernel;  // output vs emulated, under kernel_bound (when emulated given)
  std::optional<EnvelopeReport> envelope;  // with GateOptions::envelope
  HarnessReport harness;          // §6.4 against harness_reference
  std::string harness_reference;  // "emulated" (what the harness compares with) or "exact (bf16)"

  bool pass() const {
    return total.pass() && (!kernel || kernel->pass()) && (!envelope || envelope->pass());
  }
  // One line per failed criterion ("kernel: 12 elements beyond the bound", ...); empty on pass.
  std::vector<std::string> reasons() const;
};

class Gate {
 public:
  // exact: fp32 [T, 16, 512]; emulated: bf16 bits of the recipe's emulation, or empty (then the
  // kernel error is not checked and the harness check compares with bf16(exact)). The spans must
  // outlive the Gate. Throws std::invalid_argument on sizes that do not match the layout.
  Gate(const problem::Recipe& recipe, const DataScale& data, OutputLayout layout,
       std::span<const float> exact, std::span<const uint16_t> emulated,
       HarnessTolerance harness = {});
  Gate(const problem::Recipe& recipe, const DataScale& data, OutputLayout layout,
       std::span<const float> exact, std::span<const uint16_t> emulated, GateOptions options);

  // Judges one output [T, 16, 512] (bf16/f16/f32 values widened exactly to float).
  GateReport judge(std::span<const float> output, std::size_t worst_k = 10) const;

  const std::string& recipe() const { return recipe_; }
  const OutputLayout& layout() const { return layout_; }
  const Bound& total_bound() const { return total_; }
  const Bound& kernel_bound() const { return kernel_; }
  bool has_emulated() const { return !emulated_.empty(); }
  std::span<const float> exact() const { return exact_; }
  std::span<const float> emulated() const { return emulated_; }  // widened; empty if none

 private:
  std::string recipe_;
  OutputLayout layout_;
  std::span<const float> exact_;
  std::vector<float> emulated_;        // emulated bf16 widened to float
  std::vector<uint16_t> harness_ref_;  // emulated bits, or bf16(exact)
  Bound total_, kernel_;
  HarnessTolerance harness_;
  EmptyRows empty_rows_ = EmptyRows::zero;
  std::optional<EnvelopeControls> envelope_;
};

}  // namespace mlacheck::check
