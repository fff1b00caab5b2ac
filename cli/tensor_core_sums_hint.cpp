#include "cli/tensor_core_sums_hint.h"

#include <fmt/format.h>

namespace mlacheck::cli {

std::optional<std::string> tensor_core_sums_hint(const problem::Recipe& recipe, bool schedule_declared,
                                                 const check::GateReport& report) {
  if (recipe.fp8_acc == problem::Fp8Accumulation::f32 || schedule_declared) return std::nullopt;
  if (!report.kernel || report.kernel->pass() || !report.total.pass()) return std::nullopt;
  return fmt::format(
      "hint: with fp8-acc={} and no --schedule the kernel bound widens float32 sums for other split "
      "plans, not the regrouping of tensor-core runs (a run starts at each split's first key, so "
      "another plan truncates elsewhere): a correct kernel can land beyond it. Declare the kernel's "
      "schedule (e.g. --schedule splits=4,tile=64) to hold it to its own runs.",
      problem::to_string(recipe.fp8_acc));
}

}  // namespace mlacheck::cli
