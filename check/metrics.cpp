#include "check/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Cosine similarity from the three sums; two all-zero vectors are identical (1), one is not (0).
double cosine(double dot, double got_sq, double ref_sq) {
  if (got_sq == 0 && ref_sq == 0) return 1;
  if (got_sq == 0 || ref_sq == 0) return 0;
  return dot / std::sqrt(got_sq * ref_sq);
}

// Sums over one row or the whole tensor.
struct Sums {
  double err_sq = 0, ref_sq = 0, got_sq = 0, dot = 0;
  int64_t n = 0;
  void add(double g, double r) {
    const double e = g - r;
    err_sq += e * e;
    ref_sq += r * r;
    got_sq += g * g;
    dot += g * r;
    ++n;
  }
};

// Keeps the k largest positive keys seen (a min-heap on the key), then sorts them largest first.
// Elements without error are never "worst".
class WorstK {
 public:
  explicit WorstK(std::size_t k) : k_(k) {}
  void offer(double key, const ElementReport& e) {
    if (k_ == 0 || !(key > 0)) return;
    if (heap_.size() < k_) {
      heap_.push_back({key, e});
      std::push_heap(heap_.begin(), heap_.end(), greater);
    } else if (key > heap_.front().first) {
      std::pop_heap(heap_.begin(), heap_.end(), greater);
      heap_.back() = {key, e};
      std::push_heap(heap_.begin(), heap_.end(), greater);
    }
  }
  std::vector<ElementReport> sorted() {
    std::sort(heap_.begin(), heap_.end(), greater);
    std::vector<ElementReport> out;
    for (const auto& [key, e] : heap_) out.push_back(e);
    return out;
  }

 private:
  using Entry = std::pair<double, ElementReport>;
  static bool greater(const Entry& a, const Entry& b) {
    return a.first != b.first ? a.first > b.first : a.second.index < b.second.index;
  }
  std::size_t k_;
  std::vector<Entry> heap_;
};

}  // namespace

bool Metrics::pass() const {
  return anomalies.ok() && (!has_bound || (elements_within == compared && rows_within == rows));
}

Metrics measure(std::span<const float> got, std::span<const float> ref, const OutputLayout& layout,
                const Bound* bound, std::size_t worst_k) {
  const auto n = static_cast<std::size_t>(layout.elements());
  if (got.size() != n || ref.size() != n)
    throw std::invalid_argument("measure: got " + std::to_string(got.size()) + " and ref " +
                                std::to_string(ref.size()) + " values for a layout of " +
                                std::to_string(n) + " elements");
  Metrics m;
  m.elements = layout.elements();
  m.anomalies = compare_anomalies(got, ref);
  m.has_bound = bound != nullptr;
  m.rows = layout.rows();
  m.worst_cosine_row.cosine = kInf;
  double worst_row_key = -1;
  Sums all;
  bool all_same = m.anomalies.ok();
  WorstK worst(worst_k);
  const auto row_len = static_cast<std::size_t>(kRowLen);

  for (int64_t row = 0; row < layout.rows(); ++row) {
    const std::size_t base = static_cast<std::size_t>(row) * row_len;
    const int64_t token = row / problem::kNumHeads;
    const auto finite = [&](std::size_t i) {
      return std::isfinite(got[i]) && std::isfinite(ref[i]);
    };
    // The row's reference RMS first: the total bound's element tolerance scales with it.
    // With a channel profile the bound's rho weighs each channel (Bound::reference_scale).
    double ref_sq = 0, ref_scale_sq = 0;
    int64_t count = 0;
    for (std::size_t i = base; i < base + row_len; ++i) {
      if (!finite(i)) continue;
      const double sq = static_cast<double>(ref[i]) * ref[i];
      ref_sq += sq;
      ref_scale_sq += bound != nullptr ? sq * bound->reference_weight(static_cast<int>(i - base)) : sq;
      ++count;
    }
    const double rho = count > 0 ? std::sqrt(ref_sq / static_cast<double>(count)) : 0.0;
    const double rho_bound = count > 0 ? std::sqrt(ref_scale_sq / static_cast<double>(count)) : 0.0;

    Sums rs;
    double whitened_sq = 0;
    for (std::size_t i = base; i < base + row_len; ++i) {
      if (!finite(i)) continue;
      const double g = got[i], r = ref[i], err = std::fabs(g - r);
      rs.add(g, r);
      all.add(g, r);
      ElementReport e;
      e.index = static_cast<int64_t>(i);
      e.got = g;
      e.ref = r;
      e.abs_err = err;
      e.ulps = bf16_ulp_distance(quant::f32_to_bf16(got[i]), quant::f32_to_bf16(ref[i]));
      m.ulps.add(e.ulps);
      all_same = all_same && e.ulps == 0;
      const int dim = static_cast<int>(i - base);
      double key = err;
      if (bound != nullptr) {
        e.tolerance = bound->element_tolerance(static_cast<int64_t>(i), token, dim, r, rho_bound);
        if (err <= e.tolerance) ++m.elements_within;
        key = e.tolerance > 0 ? err / e.tolerance : (err > 0 ? kInf : 0.0);
        // A channel of zero scale is one whose V is 0 in every row read: its output is exactly 0, so
        // no error is allowed there (and 0 / 0 must not make the row NaN: RefProperty found a bit-exact
        // output rejected, batch=1 kv_len=1 seed=1 profile=boundary layout=ragged page_size=2).
        const double c = bound->channel(dim);
        const double w = err == 0 ? 0.0 : (c > 0 ? err / c : kInf);
        whitened_sq += w * w;
      }
      if (err > m.max_abs_err || m.max_abs_at.index < 0) m.max_abs_err = err, m.max_abs_at = e;
      if (r != 0 && (err / std::fabs(r) > m.max_rel_err || m.max_rel_at.index < 0))
        m.max_rel_err = err / std::fabs(r), m.max_rel_at = e;
      worst.offer(key, e);
    }

    RowReport rr;
    rr.token = token;
    rr.request = layout.request(token);
    rr.head = static_cast<int>(row % problem::kNumHeads);
    rr.cosine = cosine(rs.dot, rs.got_sq, rs.ref_sq);
    rr.ref_rms = rho;
    const double err_rms = rs.n > 0 ? std::sqrt(rs.err_sq / static_cast<double>(rs.n)) : 0.0;
    rr.rel_rms_err = rho > 0 ? err_rms / rho : (err_rms > 0 ? kInf : 0.0);
    rr.tolerance = kInf;
    double key = rr.rel_rms_err;
    if (bound != nullptr) {
      rr.bound_rms = rs.n > 0 ? std::sqrt(whitened_sq / static_cast<double>(rs.n)) : 0.0;
      rr.tolerance = bound->row_tolerance(token, rho_bound);
      if (rr.bound_rms <= rr.tolerance) ++m.rows_within;
      key = rr.tolerance > 0 ? rr.bound_rms / rr.tolerance : (rr.bound_rms > 0 ? kInf : 0.0);
    }
    if (key > worst_row_key) worst_row_key = key, m.worst_row = rr;
    if (rr.cosine < m.worst_cosine_row.cosine) m.worst_cosine_row = rr;
  }

  m.compared = all.n;
  m.ref_rms = all.n > 0 ? std::sqrt(all.ref_sq / static_cast<double>(all.n)) : 0.0;
  m.rel_fro_err =
      all.ref_sq > 0 ? std::sqrt(all.err_sq / all.ref_sq) : (all.err_sq > 0 ? kInf : 0.0);
  m.cosine = cosine(all.dot, all.got_sq, all.ref_sq);
  m.bitwise_equal = all_same;
  // Elements that are NaN/Inf in both at the same place pass, as in the harness.
  const int64_t matched_specials = m.elements - m.compared - m.anomalies.mismatches;
  const int64_t passed = (bound != nullptr ? m.elements_within : m.compared) + matched_specials;
  m.pass_pct = m.elements > 0
                   ? 100.0 * static_cast<double>(passed) / static_cast<double>(m.elements)
                   : 100.0;
  m.worst = worst.sorted();
  for (ElementReport& e : m.worst) e.pos = layout.position(e.index);
  if (m.max_abs_at.index >= 0) m.max_abs_at.pos = layout.position(m.max_abs_at.index);
  if (m.max_rel_at.index >= 0) m.max_rel_at.pos = layout.position(m.max_rel_at.index);
  if (m.worst_cosine_row.token < 0) m.worst_cosine_row.cosine = 1;
  return m;
}

}  // namespace mlacheck::check
