#include "check/power.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "check/lse.h"
#include "check/ulp.h"
#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

PowerRow score(const Gate& gate, std::string name, std::string what, bool expected_reject,
               std::span<const float> output, std::span<const float> baseline,
               std::span<const float> lse, const std::optional<LseReference>& lse_ref) {
  // The gate judges what a kernel writes: bf16.
  std::vector<float> rounded(output.size());
  for (std::size_t i = 0; i < output.size(); ++i)
    rounded[i] = quant::bf16_to_f32(quant::f32_to_bf16(output[i]));
  const GateReport g = gate.judge(rounded, 0);
  PowerRow row;
  const std::span<const float> exact = baseline.empty() ? gate.exact() : baseline;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    const double d = std::fabs(double(output[i]) - exact[i]);
    if (d > 0) row.effect_ulps = std::max(row.effect_ulps, d / bf16_ulp(exact[i]));
  }
  if (gate.has_emulated()) {
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < rounded.size(); ++i) {
      const double e = gate.emulated()[i];
      err += (rounded[i] - e) * (rounded[i] - e);
      ref += e * e;
    }
    row.kernel_rel_rms = ref > 0 ? std::sqrt(err / ref) : 0.0;
  }
  row.name = std::move(name);
  row.what = std::move(what);
  row.expected_reject = expected_reject;
  row.total_rejects = !g.total.pass();
  if (g.kernel) {
    row.kernel_rejects = !g.kernel->pass();
    row.kernel_beyond = g.kernel->compared - g.kernel->elements_within;
  }
  row.gate_rejects = !g.pass();
  row.harness_rejects = !g.harness.pass;
  row.total_rel_fro = g.total.rel_fro_err;
  const RowReport& w = g.total.worst_row;
  row.total_worst_row = w.tolerance > 0 ? w.bound_rms / w.tolerance : 0.0;
  if (lse_ref && !lse.empty()) {
    const LseReport l = check_lse(lse, lse_ref->lse, gate.layout(), lse_ref->sum_rounding);
    row.lse_rejects = !l.pass();
    row.lse_worst_ratio = l.class_mismatches > 0 ? INFINITY : l.worst_ratio;
  }
  return row;
}

}  // namespace

WrongAnswer all_zeros(const OutputLayout& layout) {
  return {"zeros", "every element 0 (the harness's atol 1e-2 accepts it)",
          std::vector<float>(static_cast<std::size_t>(layout.elements()), 0.0f)};
}

std::vector<std::string> PowerReport::warnings() const {
  std::vector<std::string> out;
  for (const PowerRow& r : rows) {
    if (r.ok()) continue;  // includes wrong answers with no visible effect on this data
    out.push_back(
        r.expected_reject
            ? fmt::format("the gate cannot reject '{}' ({}) for recipe {}", r.name, r.what, recipe)
            : fmt::format("the gate rejects {}'{}' ({}) for recipe {}: a bound is too tight",
                          r.rejected_by_lse_only() ? "the LSE of " : "", r.name, r.what, recipe));
  }
  return out;
}

PowerReport score_power(const Gate& gate, std::span<const WrongAnswer> wrong,
                        std::optional<LseReference> lse) {
  PowerReport report;
  report.recipe = gate.recipe();
  if (gate.has_emulated())
    report.rows.push_back(score(gate, "emulated", "the recipe's emulated output (control)", false,
                                gate.emulated(), {}, lse ? lse->lse : std::span<const float>{}, lse));
  for (const WrongAnswer& w : wrong) {
    if (w.output.size() != static_cast<std::size_t>(gate.layout().elements()))
      throw std::invalid_argument(fmt::format("score_power: '{}' has {} values, expected {}",
                                              w.name, w.output.size(), gate.layout().elements()));
    report.rows.push_back(score(gate, w.name, w.what, !w.control, w.output, w.baseline, w.lse, lse));
  }
  return report;
}

}  // namespace mlacheck::check
