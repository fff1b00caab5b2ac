#include "check/drift.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "problem/shape.h"
#include "check/ulp.h"

namespace mlacheck::check {

double rel_fro(std::span<const float> a, std::span<const float> b) {
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
    const double d = double(a[i]) - b[i];
    err += d * d;
    ref += double(b[i]) * b[i];
  }
  return ref > 0 ? std::sqrt(err / ref) : (err > 0 ? INFINITY : 0.0);
}

void finish_waterfall(Waterfall& w) {
  const double e2 = w.recipe_error * w.recipe_error;
  for (WaterfallStage& s : w.stages)
    s.share = e2 > 0 ? (e2 - s.rel_error * s.rel_error) / e2 : 0.0;
}

std::optional<std::size_t> first_failure(const std::vector<StageCheck>& stages) {
  for (std::size_t i = 0; i < stages.size(); ++i)
    if (stages[i].present && !stages[i].pass) return i;
  return std::nullopt;
}

std::vector<double> error_ratios(std::span<const float> got, std::span<const float> ref,
                                 const OutputLayout& layout, const Bound& bound) {
  std::vector<double> out(ref.size(), 0.0);
  for (int64_t row = 0; row < layout.rows(); ++row) {
    const auto base = static_cast<std::size_t>(row * kRowLen);
    const double rho = bound.reference_scale(ref.subspan(base, kRowLen));
    const int64_t token = row / problem::kNumHeads;
    for (std::size_t i = base; i < base + kRowLen; ++i) {
      if (std::isnan(got[i]) != std::isnan(ref[i]) ||
          (!std::isfinite(got[i]) && !(got[i] == ref[i]))) {
        out[i] = INFINITY;
        continue;
      }
      if (!std::isfinite(got[i])) continue;
      const double tol = bound.element_tolerance(static_cast<int64_t>(i), token,
                                                 static_cast<int>(i - base), ref[i], rho);
      const double err = std::fabs(double(got[i]) - ref[i]);
      out[i] = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0);
    }
  }
  return out;
}

ErrorMaps maps_of(std::span<const double> ratios, int64_t tokens) {
  ErrorMaps m;
  m.token_head.assign(static_cast<std::size_t>(tokens * problem::kNumHeads), 0.0);
  m.channel.assign(kRowLen, 0.0);
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    const std::size_t row = i / kRowLen, d = i % kRowLen;
    m.token_head[row] = std::max(m.token_head[row], ratios[i]);
    m.channel[d] += ratios[i] * ratios[i];
  }
  const double rows = static_cast<double>(std::max<int64_t>(1, tokens * problem::kNumHeads));
  for (double& c : m.channel) c = std::sqrt(c / rows);
  return m;
}

nlohmann::json to_json(const Waterfall& w) {
  nlohmann::json stages = nlohmann::json::array();
  for (const WaterfallStage& s : w.stages)
    stages.push_back({{"stage", s.name}, {"error_with_stage_exact", s.rel_error}, {"share", s.share}});
  return {{"recipe_error", w.recipe_error},
          {"kernel_total_error", w.kernel_total},
          {"kernel_error", w.kernel_error},
          {"stages", stages}};
}

nlohmann::json to_json(const StageCheck& s) {
  return {{"stage", s.name}, {"present", s.present}, {"pass", s.pass}, {"detail", s.detail},
          {"worst_over_tolerance", std::isfinite(s.worst_ratio) ? nlohmann::json(s.worst_ratio)
                                                                 : nlohmann::json(nullptr)}};
}

std::string format_waterfall(const Waterfall& w) {
  std::string s = fmt::format(
      "recipe waterfall (relative Frobenius error vs exact; share = part of the recipe's squared "
      "error that goes when the stage is exact):\n  {:<34} {:>12}\n",
      "the recipe as emulated", fmt::format("{:.3e}", w.recipe_error));
  for (const WaterfallStage& st : w.stages)
    s += fmt::format("  {:<34} {:>12} {:>7.1f} %\n", "  exact " + st.name,
                     fmt::format("{:.3e}", st.rel_error), 100 * st.share);
  s += fmt::format("  {:<34} {:>12}   ({:.2f} x the recipe's own error)\n", "the kernel's output",
                   fmt::format("{:.3e}", w.kernel_total),
                   w.recipe_error > 0 ? w.kernel_total / w.recipe_error : 0.0);
  s += fmt::format("  {:<34} {:>12}\n", "kernel vs the emulated recipe",
                   fmt::format("{:.3e}", w.kernel_error));
  return s;
}

std::string format_stages(const std::vector<StageCheck>& stages) {
  std::string s = "intermediate stages, in pipeline order (the kernel's own vs the emulation's):\n";
  for (const StageCheck& st : stages)
    s += fmt::format("  {:<16} {:<8} {}\n", st.name,
                     !st.present ? "-" : st.pass ? "ok" : "OUT", st.detail);
  const auto first = first_failure(stages);
  s += first ? fmt::format("first stage out of its bound: {}\n", stages[*first].name)
             : std::string("every stage present is within its bound\n");
  return s;
}

}  // namespace mlacheck::check
