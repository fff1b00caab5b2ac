#include "check/report_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace mlacheck::check {
namespace {

std::string where(const Position& p) {
  return fmt::format("token {} (request {}) head {} dim {}", p.token, p.request, p.head, p.dim);
}

std::string row_where(const RowReport& r) {
  return fmt::format("token {} (request {}) head {}", r.token, r.request, r.head);
}

std::string element_line(const ElementReport& e) {
  if (e.index < 0) return "-";
  return fmt::format("{:.3e} at {}: output {:.6e}, reference {:.6e} ({} bf16 ulps)", e.abs_err,
                     where(e.pos), e.got, e.ref, e.ulps);
}

std::string specials(const SpecialCounts& c) {
  return fmt::format("NaN {} +Inf {} -Inf {}", c.nan, c.pos_inf, c.neg_inf);
}

const char* verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

}  // namespace

std::string format_metrics(const Metrics& m, const std::string& title) {
  std::string s = fmt::format("{}: {}\n", title, verdict(m.pass()));
  s += fmt::format("  elements        {} ({} finite in both)\n", m.elements, m.compared);
  s += fmt::format("  NaN/Inf         output {}; reference {}; positions that differ: {}\n",
                   specials(m.anomalies.got), specials(m.anomalies.ref), m.anomalies.mismatches);
  if (!m.anomalies.first.empty()) {
    s += "                  first at flat index";
    for (int64_t i : m.anomalies.first) s += fmt::format(" {}", i);
    s += "\n";
  }
  s += fmt::format("  max abs error   {}\n", element_line(m.max_abs_at));
  s += fmt::format("  max rel error   {:.3e} at {}\n", m.max_rel_err,
                   m.max_rel_at.index < 0 ? std::string("-") : where(m.max_rel_at.pos));
  s += fmt::format("  rel Frobenius   {:.4e}   (reference RMS {:.4e})\n", m.rel_fro_err, m.ref_rms);
  s += fmt::format("  cosine          {:.8f}; worst row {:.8f} at {}\n", m.cosine,
                   m.worst_cosine_row.cosine, row_where(m.worst_cosine_row));
  if (m.worst_row.token >= 0) {
    s += fmt::format("  worst row       {}: relative RMS error {:.4e}", row_where(m.worst_row),
                     m.worst_row.rel_rms_err);
    if (m.has_bound && std::isfinite(m.worst_row.tolerance))
      s += fmt::format("; bound measure {:.4e} vs {:.4e}", m.worst_row.bound_rms,
                       m.worst_row.tolerance);
    s += "\n";
  }
  s += "  bf16 ulps       ";
  for (int b = 0; b < UlpHistogram::kBuckets; ++b)
    if (m.ulps.count[static_cast<std::size_t>(b)] > 0)
      s += fmt::format("{}: {}  ", UlpHistogram::label(b),
                       m.ulps.count[static_cast<std::size_t>(b)]);
  s += fmt::format("(max {}{})\n", m.ulps.max, m.bitwise_equal ? ", bitwise equal" : "");
  if (m.has_bound)
    s += fmt::format(
        "  pass            {:.4f}% ({} of {} elements, {} of {} rows within the bound)\n",
        m.pass_pct, m.elements_within, m.compared, m.rows_within, m.rows);
  if (!m.worst.empty()) {
    s += fmt::format("  worst {} elements ({}):\n", m.worst.size(),
                     m.has_bound ? "by |error| / tolerance" : "by |error|");
    s += fmt::format("    {:>6} {:>7} {:>4} {:>4} {:>14} {:>14} {:>11} {:>11} {:>6}\n", "token",
                     "request", "head", "dim", "output", "reference", "|error|", "tolerance",
                     "ulps");
    for (const ElementReport& e : m.worst)
      s +=
          fmt::format("    {:>6} {:>7} {:>4} {:>4} {:>14.6e} {:>14.6e} {:>11.3e} {:>11.3e} {:>6}\n",
                      e.pos.token, e.pos.request, e.pos.head, e.pos.dim, e.got, e.ref, e.abs_err,
                      e.tolerance, e.ulps);
  }
  return s;
}

std::string format_bound(const Bound& b) {
  std::string s = fmt::format("  {} bound, derived (tolerance.cpp){}{}:\n", b.name,
                              b.why.empty() ? "" : "; applies because ", b.why);
  std::size_t width = 0;
  for (const BoundTerm& t : b.terms) width = std::max(width, t.name.size());
  for (const BoundTerm& t : b.terms)
    s += fmt::format("    {:<{}}  {:.4e}\n", t.name, width, t.value);
  return s;
}

std::string format_harness(const HarnessReport& h, const std::string& reference) {
  std::string s = fmt::format("harness check (NUMERICS §6.4: rtol {} atol {}, vs {}): {}\n",
                              h.tolerance.rtol, h.tolerance.atol, reference, verdict(h.pass));
  if (h.pass) return s + fmt::format("  Maximum error: {:.6e}\n", h.max_error);
  s += fmt::format("  Number of mismatched elements: {}\n", h.mismatches);
  for (const HarnessMismatch& m : h.first)
    s += fmt::format("  ERROR at {}: {:.6e} {:.6e}\n", where(m.pos), m.got, m.ref);
  return s;
}

std::string format_gate(const GateReport& g) {
  std::string s = fmt::format("recipe {}: {}\n", g.recipe, verdict(g.pass()));
  s += fmt::format(
      "  total error  (output vs exact fp32):   {}  rel Frobenius {:.3e}, cosine {:.6f}\n",
      verdict(g.total.pass()), g.total.rel_fro_err, g.total.cosine);
  if (g.kernel)
    s += fmt::format(
        "  kernel error (output vs emulated {}): {}  max {} bf16 ulps, {:.4f}% within the {} "
        "bound\n",
        g.recipe, verdict(g.kernel->pass()), g.kernel->ulps.max, g.kernel->pass_pct,
        g.kernel_bound.name);
  else
    s += "  kernel error: not checked (no emulated output)\n";
  if (g.envelope)
    s += fmt::format(
        "  schedule-free envelope:               {}  {:.2e} from the single pass (relative RMS), "
        "allowed {:.2e} = {} x {:.2e} (the farthest correct schedule, {}) + floor {:.2e}; {} of {} "
        "tokens sampled\n",
        verdict(g.envelope->pass()), g.envelope->output_distance, g.envelope->allowed(),
        check::kEnvelopeFactor, g.envelope->farthest_control, g.envelope->farthest_schedule,
        g.envelope->floor, g.envelope->tokens_sampled, g.envelope->tokens_total);
  s += fmt::format("  harness check (rtol=atol=1e-2):       {}  (the gate does not use it)\n",
                   g.harness.pass ? "accepts" : "rejects");
  if (g.skipped_empty_rows > 0)
    s += fmt::format("  rows with no key: {} (token, head) rows not judged (--empty-rows any)\n",
                     g.skipped_empty_rows);
  for (const std::string& r : g.reasons()) s += fmt::format("  reason: {}\n", r);
  // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "literal" + std::string.
  s += '\n';
  s += format_metrics(g.total, "total error, output vs exact");
  s += format_bound(g.total_bound);
  if (g.kernel) {
    s += '\n';
    s += format_metrics(*g.kernel, fmt::format("kernel error, output vs emulated {}", g.recipe));
    s += format_bound(g.kernel_bound);
  }
  s += '\n';
  s += format_harness(g.harness, g.harness_reference);
  return s;
}

std::string format_power(const PowerReport& p) {
  const auto yn = [](bool reject) { return reject ? "reject" : "accept"; };
  std::string s = fmt::format("power of the gate, recipe {} (known-wrong outputs):\n", p.recipe);
  s += fmt::format("  {:<16} {:>7} {:>7} {:>7} {:>8} {:>11} {:>10}  {}\n", "output", "total",
                   "kernel", "GATE", "harness", "rel Frob", "row/bound", "how it was made");
  for (const PowerRow& r : p.rows)
    s += fmt::format("  {:<16} {:>7} {:>7} {:>7} {:>8} {:>11.3e} {:>10.3g}  {}{}\n", r.name,
                     yn(r.total_rejects), r.kernel_rejects ? yn(*r.kernel_rejects) : "-",
                     yn(r.gate_rejects), yn(r.harness_rejects), r.total_rel_fro, r.total_worst_row,
                     r.what, r.ok() ? "" : "   <-- !");
  for (const std::string& w : p.warnings()) s += fmt::format("  WARNING: {}\n", w);
  return s;
}

}  // namespace mlacheck::check
