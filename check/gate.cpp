#include "check/gate.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/core.h>

#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

void describe_failures(const Metrics& m, std::string_view what, std::vector<std::string>& out) {
  if (!m.anomalies.ok())
    out.push_back(fmt::format("{}: NaN/Inf at {} positions where the reference differs", what,
                              m.anomalies.mismatches));
  if (!m.has_bound) return;
  if (m.elements_within < m.compared)
    out.push_back(fmt::format("{}: {} of {} elements beyond the element bound", what,
                              m.compared - m.elements_within, m.compared));
  if (m.rows_within < m.rows)
    out.push_back(fmt::format("{}: {} of {} rows beyond the row bound", what,
                              m.rows - m.rows_within, m.rows));
}

}  // namespace

std::vector<std::string> GateReport::reasons() const {
  std::vector<std::string> out;
  describe_failures(total, "total error", out);
  if (kernel) describe_failures(*kernel, "kernel error", out);
  if (envelope && !envelope->pass())
    out.push_back(envelope->non_finite > 0
                      ? fmt::format("schedule-free envelope: {} non-finite elements in the sampled rows",
                                    envelope->non_finite)
                      : fmt::format("schedule-free envelope: {:.2e} from the single pass, {:.2e} "
                                    "allowed ({} x the farthest correct schedule, {}, + floor)",
                                    envelope->output_distance, envelope->allowed(),
                                    kEnvelopeFactor, envelope->farthest_schedule));
  return out;
}

Gate::Gate(const problem::Recipe& recipe, const DataScale& data, OutputLayout layout,
           std::span<const float> exact, std::span<const uint16_t> emulated,
           HarnessTolerance harness)
    : Gate(recipe, data, std::move(layout), exact, emulated, GateOptions{harness, {}, {}, {}}) {}

Gate::Gate(const problem::Recipe& recipe, const DataScale& data, OutputLayout layout,
           std::span<const float> exact, std::span<const uint16_t> emulated, GateOptions options)
    : recipe_(problem::spell(recipe)),
      layout_(std::move(layout)),
      exact_(exact),
      total_(check::total_bound(recipe, data, layout_)),
      kernel_(options.kernel ? std::move(*options.kernel)
                             : check::kernel_bound(recipe, data, layout_)),
      harness_(options.harness),
      empty_rows_(options.empty_rows),
      envelope_(std::move(options.envelope)) {
  const auto n = static_cast<std::size_t>(layout_.elements());
  if (exact.size() != n)
    throw std::invalid_argument(
        fmt::format("Gate: exact output has {} values, expected {}", exact.size(), n));
  if (!emulated.empty() && emulated.size() != n)
    throw std::invalid_argument(
        fmt::format("Gate: emulated output has {} values, expected {}", emulated.size(), n));
  if (!emulated.empty()) {
    harness_ref_.assign(emulated.begin(), emulated.end());
    emulated_.resize(n);
    for (std::size_t i = 0; i < n; ++i) emulated_[i] = quant::bf16_to_f32(emulated[i]);
  } else {
    harness_ref_.resize(n);
    for (std::size_t i = 0; i < n; ++i) harness_ref_[i] = quant::f32_to_bf16(exact[i]);
  }
}

GateReport Gate::judge(std::span<const float> given, std::size_t worst_k) const {
  GateReport r;
  r.recipe = recipe_;
  // EmptyRows::any: rows with no key take the reference's value (0 in both references), so that
  // whatever the kernel left there is neither an anomaly nor an error.
  std::vector<float> patched;
  std::span<const float> output = given;
  if (empty_rows_ == EmptyRows::any && given.size() == exact_.size()) {
    for (int64_t t = 0; t < layout_.tokens(); ++t) {
      if (layout_.visible_kv(t) != 0) continue;
      if (patched.empty()) patched.assign(given.begin(), given.end());
      const auto first = static_cast<std::size_t>(t * problem::kNumHeads * kRowLen);
      std::fill(patched.begin() + static_cast<std::ptrdiff_t>(first),
                patched.begin() + static_cast<std::ptrdiff_t>(first + problem::kNumHeads * kRowLen),
                0.0f);
      r.skipped_empty_rows += problem::kNumHeads;
    }
    if (!patched.empty()) output = patched;
  }
  r.total_bound = total_;
  r.kernel_bound = kernel_;
  r.total = measure(output, exact_, layout_, &total_, worst_k);
  if (has_emulated()) r.kernel = measure(output, emulated_, layout_, &kernel_, worst_k);
  if (has_emulated() && envelope_ && output.size() == emulated_.size())
    r.envelope = check_envelope(output, emulated_, layout_, *envelope_);
  r.harness = harness_check(output, harness_ref_, layout_, harness_);
  r.harness_reference = has_emulated() ? "emulated" : "exact (rounded to bf16)";
  return r;
}

}  // namespace mlacheck::check
