#include "check/schedule_envelope.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "check/ulp.h"
#include "problem/shape.h"

namespace mlacheck::check {
namespace {

constexpr int64_t kHeads = problem::kNumHeads;

// sum over the sampled rows of |r - a o|^2 (D's numerator), x given on the sampled tokens
// (sample_major) or on every token.
double distance_sq(std::span<const float> x, bool sample_major, std::span<const float> single,
                   const OutputLayout& layout, const EnvelopeControls& c, int64_t* non_finite) {
  double sum = 0;
  for (std::size_t k = 0; k < c.tokens.size(); ++k) {
    const int64_t t = c.tokens[k];
    if (layout.visible_kv(t) == 0) continue;
    for (int64_t h = 0; h < kHeads; ++h) {
      const std::size_t row = static_cast<std::size_t>(t * kHeads + h);
      const std::size_t xrow = sample_major ? k * kHeads + static_cast<std::size_t>(h) : row;
      const float* o = single.data() + row * kRowLen;
      const float* g = x.data() + xrow * kRowLen;
      double ro = 0, oo = 0;
      bool finite = true;
      for (int d = 0; d < kRowLen; ++d) {
        if (!std::isfinite(g[d])) {
          finite = false;
          if (non_finite) ++*non_finite;
          continue;
        }
        ro += (double(g[d]) - o[d]) * o[d];
        oo += double(o[d]) * o[d];
      }
      if (!finite) continue;
      const double delta = c.row_sum_rounding.empty() ? 0.0 : c.row_sum_rounding[row];
      const double a = oo > 0 ? std::clamp(ro / oo, -delta, delta) : 0.0;
      for (int d = 0; d < kRowLen; ++d) {
        const double r = double(g[d]) - o[d] - a * o[d];
        sum += r * r;
      }
    }
  }
  return sum;
}

}  // namespace

EnvelopeReport check_envelope(std::span<const float> output, std::span<const float> single,
                              const OutputLayout& layout, const EnvelopeControls& c) {
  const auto n = static_cast<std::size_t>(layout.elements());
  const std::size_t sampled = c.tokens.size() * kHeads * kRowLen;
  if (output.size() != n || single.size() != n)
    throw std::invalid_argument(fmt::format("check_envelope: output {} / single {} values, the layout {}",
                                            output.size(), single.size(), n));
  if (!c.row_sum_rounding.empty() && c.row_sum_rounding.size() != n / kRowLen)
    throw std::invalid_argument("check_envelope: row_sum_rounding is not [T, 16]");
  for (const EnvelopeControls::Control& ctl : c.controls)
    if (ctl.values.size() != sampled)
      throw std::invalid_argument(fmt::format("check_envelope: control '{}' has {} values, {} expected",
                                              ctl.schedule, ctl.values.size(), sampled));
  for (int64_t t : c.tokens)
    if (t < 0 || t >= layout.tokens())
      throw std::invalid_argument(fmt::format("check_envelope: token {} outside 0..{}", t, layout.tokens() - 1));

  EnvelopeReport r;
  r.tokens_sampled = static_cast<int64_t>(c.tokens.size());
  r.tokens_total = layout.tokens();
  double ref_sq = 0, floor_sq = 0;
  for (int64_t t : c.tokens) {
    if (layout.visible_kv(t) == 0) continue;
    r.rows += kHeads;
    for (std::size_t i = static_cast<std::size_t>(t * kHeads * kRowLen);
         i < static_cast<std::size_t>((t + 1) * kHeads * kRowLen); ++i) {
      ref_sq += double(single[i]) * single[i];
      const double floor_part = bf16_ulp(single[i]) / kFloorUlps;
      floor_sq += floor_part * floor_part;
    }
  }
  if (ref_sq == 0) return r;  // nothing sampled, or an all-zero reference: nothing to measure
  const auto relative = [&](double sq) { return std::sqrt(sq / ref_sq); };
  r.floor = relative(floor_sq);
  r.output_distance = relative(distance_sq(output, false, single, layout, c, &r.non_finite));
  for (const EnvelopeControls::Control& ctl : c.controls) {
    const double d = relative(distance_sq(ctl.values, true, single, layout, c, nullptr));
    if (d >= r.farthest_control) r.farthest_control = d, r.farthest_schedule = ctl.schedule;
  }
  return r;
}

}  // namespace mlacheck::check
