#include "check/report_json.h"

#include <algorithm>
#include <cmath>

namespace mlacheck::check {
namespace {

using nlohmann::json;

json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json to_json(const Position& p) {
  return {{"token", p.token}, {"request", p.request}, {"head", p.head}, {"dim", p.dim}};
}

json to_json(const ElementReport& e) {
  if (e.index < 0) return nullptr;
  return {{"index", e.index},
          {"position", to_json(e.pos)},
          {"output", number(e.got)},
          {"reference", number(e.ref)},
          {"abs_error", number(e.abs_err)},
          {"tolerance", number(e.tolerance)},
          {"bf16_ulps", e.ulps}};
}

json to_json(const RowReport& r) {
  if (r.token < 0) return nullptr;
  return {{"token", r.token},
          {"request", r.request},
          {"head", r.head},
          {"cosine", number(r.cosine)},
          {"rel_rms_error", number(r.rel_rms_err)},
          {"reference_rms", number(r.ref_rms)},
          {"bound_measure", number(r.bound_rms)},
          {"bound", number(r.tolerance)}};
}

json to_json(const SpecialCounts& c) {
  return {{"nan", c.nan}, {"pos_inf", c.pos_inf}, {"neg_inf", c.neg_inf}};
}

json max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return number(m);
}

}  // namespace

json to_json(const Metrics& m) {
  json hist = json::object();
  for (int b = 0; b < UlpHistogram::kBuckets; ++b)
    if (m.ulps.count[static_cast<std::size_t>(b)] > 0)
      hist[UlpHistogram::label(b)] = m.ulps.count[static_cast<std::size_t>(b)];
  json worst = json::array();
  for (const ElementReport& e : m.worst) worst.push_back(to_json(e));
  return {{"pass", m.pass()},
          {"elements", m.elements},
          {"compared", m.compared},
          {"anomalies",
           {{"output", to_json(m.anomalies.got)},
            {"reference", to_json(m.anomalies.ref)},
            {"position_mismatches", m.anomalies.mismatches},
            {"first_mismatch_indices", m.anomalies.first}}},
          {"max_abs_error", number(m.max_abs_err)},
          {"max_abs_at", to_json(m.max_abs_at)},
          {"max_rel_error", number(m.max_rel_err)},
          {"max_rel_at", to_json(m.max_rel_at)},
          {"rel_frobenius_error", number(m.rel_fro_err)},
          {"cosine", number(m.cosine)},
          {"reference_rms", number(m.ref_rms)},
          {"worst_cosine_row", to_json(m.worst_cosine_row)},
          {"worst_row", to_json(m.worst_row)},
          {"bf16_ulp_histogram", hist},
          {"max_bf16_ulps", m.ulps.max},
          {"bitwise_equal", m.bitwise_equal},
          {"has_bound", m.has_bound},
          {"elements_within", m.elements_within},
          {"rows", m.rows},
          {"rows_within", m.rows_within},
          {"pass_percent", number(m.pass_pct)},
          {"worst", worst}};
}

json to_json(const Bound& b) {
  json terms = json::array();
  for (const BoundTerm& t : b.terms)
    terms.push_back({{"term", t.name}, {"value", number(t.value)}});
  double extra = 0;
  for (float x : b.elem_extra) extra = std::max(extra, static_cast<double>(x));
  return {{"name", b.name},
          {"why", b.why},
          {"element_ulps", b.elem_ulps},
          {"max_element_extra", extra},
          {"max_element_rel_rms", max_of(b.elem_rel_rms)},
          {"max_element_abs", max_of(b.elem_abs)},
          {"has_row_bound", b.has_row_bound},
          {"max_row_rel_rms", max_of(b.row_rel_rms)},
          {"max_row_abs", max_of(b.row_abs)},
          {"channel_scaled", !b.channel_scale.empty()},
          {"derivation", terms}};
}

json to_json(const HarnessReport& h) {
  json first = json::array();
  for (const HarnessMismatch& m : h.first)
    first.push_back({{"index", m.index},
                     {"position", to_json(m.pos)},
                     {"output", number(m.got)},
                     {"reference", number(m.ref)}});
  return {{"pass", h.pass},
          {"rtol", h.tolerance.rtol},
          {"atol", h.tolerance.atol},
          {"mismatches", h.mismatches},
          {"first_mismatches", first},
          {"max_error", number(h.max_error)}};
}

json to_json(const GateReport& g) {
  json reasons = g.reasons();
  return {
      {"recipe", g.recipe},
      {"pass", g.pass()},
      {"reasons", reasons},
      {"skipped_empty_rows", g.skipped_empty_rows},
      {"total",
       {{"reference", "exact"}, {"bound", to_json(g.total_bound)}, {"metrics", to_json(g.total)}}},
      {"kernel", g.kernel ? json{{"reference", "emulated"},
                                 {"bound", to_json(g.kernel_bound)},
                                 {"metrics", to_json(*g.kernel)}}
                          : json(nullptr)},
      {"harness", {{"reference", g.harness_reference}, {"report", to_json(g.harness)}}},
      {"schedule_free_envelope",
       g.envelope ? json{{"pass", g.envelope->pass()},
                         {"output_distance", number(g.envelope->output_distance)},
                         {"farthest_control", number(g.envelope->farthest_control)},
                         {"farthest_schedule", g.envelope->farthest_schedule},
                         {"factor", kEnvelopeFactor},
                         {"floor", number(g.envelope->floor)},
                         {"allowed", number(g.envelope->allowed())},
                         {"non_finite", g.envelope->non_finite},
                         {"tokens_sampled", g.envelope->tokens_sampled},
                         {"tokens_total", g.envelope->tokens_total}}
                  : json(nullptr)}};
}

json to_json(const PowerReport& p) {
  json rows = json::array();
  for (const PowerRow& r : p.rows)
    rows.push_back({{"name", r.name},
                    {"visible", r.visible()},
                    {"effect_ulps", number(r.effect_ulps)},
                    {"kernel_rel_rms", number(r.kernel_rel_rms)},
                    {"what", r.what},
                    {"expected_reject", r.expected_reject},
                    {"total_rejects", r.total_rejects},
                    {"kernel_rejects", r.kernel_rejects ? json(*r.kernel_rejects) : json(nullptr)},
                    {"gate_rejects", r.gate_rejects},
                    {"harness_rejects", r.harness_rejects},
                    {"total_rel_frobenius", number(r.total_rel_fro)},
                    {"total_worst_row_over_bound", number(r.total_worst_row)},
                    {"kernel_elements_beyond", r.kernel_beyond},
                    {"lse_rejects", r.lse_rejects ? json(*r.lse_rejects) : json(nullptr)},
                    {"lse_worst_over_bound", r.lse_rejects ? number(r.lse_worst_ratio) : json(nullptr)},
                    {"rejects_output_or_lse", r.rejects()},
                    {"as_expected", r.ok()}});
  return {{"recipe", p.recipe},
          {"rows", rows},
          {"warnings", p.warnings()},
          {"gate_has_power", p.gate_has_power()}};
}

}  // namespace mlacheck::check
