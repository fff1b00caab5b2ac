#pragma once
// Drift localization (DESIGN.md "Judging other people's kernels"): where a kernel's error comes
// from. check/ compares tensors only; the caller (cli/cmd_drift.cpp) runs the emulations.
//   - the recipe waterfall: the emulated recipe with one rounding made exact at a time; each
//     stage's share of the recipe's total error (independent errors add in squares);
//   - the kernel's intermediates against the emulation's, stage by stage (Q codes, split
//     partials and LSEs, the merge, the output), with the first stage that leaves its bound;
//   - error maps: per (token, head), per output channel, per (token, split).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/layout.h"
#include "check/tolerance.h"

namespace mlacheck::check {

// ||a - b||_F / ||b||_F over finite pairs (0 when both are 0).
double rel_fro(std::span<const float> a, std::span<const float> b);

struct WaterfallStage {
  std::string name;        // "Q quantization", ...
  double rel_error = 0;    // the recipe with this stage exact, vs exact
  double share = 0;        // (E^2 - E_stage^2) / E^2, E = the whole recipe's error
};
struct Waterfall {
  double recipe_error = 0;  // emulated recipe vs exact (rel. Frobenius)
  double kernel_total = 0;  // the kernel's output vs exact
  double kernel_error = 0;  // the kernel's output vs the emulated recipe
  std::vector<WaterfallStage> stages;
};
// Fills share from rel_error and recipe_error.
void finish_waterfall(Waterfall& w);

// One step of the kernel's pipeline compared with the emulation's.
struct StageCheck {
  explicit StageCheck(std::string stage = {}, bool is_present = false, bool passes = true,
                      std::string what = {}, double worst = 0)
      : name(std::move(stage)), present(is_present), pass(passes), detail(std::move(what)),
        worst_ratio(worst) {}
  std::string name;     // "Q codes", "split partials", "split LSEs", "merge", "output", "lse"
  bool present = false;  // the output file holds what this stage needs
  bool pass = true;
  std::string detail;   // what was compared and the worst place
  double worst_ratio = 0;  // worst |error| / tolerance (0 where not a ratio)
};

// The first stage that is present and fails, or nothing.
std::optional<std::size_t> first_failure(const std::vector<StageCheck>& stages);

// Per-element |got - ref| / tolerance under `bound` ([T, 16, 512] each).
std::vector<double> error_ratios(std::span<const float> got, std::span<const float> ref,
                                 const OutputLayout& layout, const Bound& bound);

// Maps of ratios: the worst per (token, head) [T, 16]; the RMS per channel over all rows [512].
struct ErrorMaps {
  std::vector<double> token_head;  // [T, 16]
  std::vector<double> channel;     // [512]
  std::vector<double> token_split; // [T, S] worst over heads and dims, when partials were given
  int64_t splits = 0;
};
ErrorMaps maps_of(std::span<const double> ratios, int64_t tokens);

nlohmann::json to_json(const Waterfall&);
nlohmann::json to_json(const StageCheck&);
std::string format_waterfall(const Waterfall&);
std::string format_stages(const std::vector<StageCheck>&);

}  // namespace mlacheck::check
