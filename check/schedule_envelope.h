#pragma once
// The schedule-free envelope: the second test of the gate when no --schedule is declared, beside
// the element-wise schedule-free kernel bound (tolerance.h schedule_free_bound).
//
// The element-wise bound must hold for the worst case of P re-rounding in every element at once,
// so it lets through a wrong output that is several times farther from the single-pass emulation
// than any correct schedule gets (README "The gate's power"; e.g. an fp64 output judged under a
// recipe whose fp8 quantization it lacks). The envelope measures what correct schedules actually
// do on this data: the recipe is emulated with a few schedules at the ends of what a kernel may do
// (the controls, computed by the caller on a sample of the requests), and the output may lie no
// farther from the single pass than kEnvelopeFactor times the farthest of them, plus a floor:
//   D(x) = sqrt( sum_rows |r - a o|^2 / sum_rows |o|^2 ),  r = x - o,  o the single pass's row,
//          a = clamp(<r, o> / <o, o>, -delta, delta), delta = the row's row_sum_rounding (a kernel
//          that sums l from the rounded P scales its row by up to that: not an error)
//   pass  iff  D(output) <= kEnvelopeFactor * max_c D(control_c) + floor,
//   floor = sqrt( sum (ulp(o_i) / kFloorUlps)^2 / sum o_i^2 ) over the sampled rows: where every
//           control equals the single pass (f32 P, one key), float32 order alone still moves an
//           output rounding by an ulp now and then (about |f32 noise| / ulp of the elements, far
//           below 1/64: one ulp in 1/64 of them is ulp / 8 RMS).
// This is an empirical bound, not a derived one: it assumes a kernel's schedule re-rounds P no
// worse than the extremes emulated, which the tests check on random cases and schedules
// (RefProperty) and on independent kernels (examples/). Rows with no visible key are left out.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check/layout.h"

namespace mlacheck::check {

// Headroom over the farthest control: correct schedules between the emulated extremes, and the
// scatter of one schedule's distance between cases, stay within it (measured: docs/PERF.md,
// "Schedule-free envelope").
inline constexpr double kEnvelopeFactor = 2.0;
inline constexpr double kFloorUlps = 8;

// The controls on the sampled tokens: each a correct output of the recipe with another schedule.
struct EnvelopeControls {
  std::vector<int64_t> tokens;  // the sampled tokens (rows of [T, 16, 512]), ascending
  struct Control {
    std::string schedule;       // its spelling, for the report
    std::vector<float> values;  // [tokens.size(), 16, 512], widened bf16
  };
  std::vector<Control> controls;
  std::vector<float> row_sum_rounding;  // [T, 16] of the single pass (ref row_sum_rounding)
};

struct EnvelopeReport {
  int64_t tokens_sampled = 0, tokens_total = 0, rows = 0;
  int64_t non_finite = 0;  // output elements not finite in the sampled rows (fails)
  double output_distance = 0;
  double farthest_control = 0;
  std::string farthest_schedule;
  double floor = 0;
  double allowed() const { return kEnvelopeFactor * farthest_control + floor; }
  bool pass() const { return non_finite == 0 && output_distance <= allowed(); }
};

// output and single: [T, 16, 512] (single = the single-pass emulation, widened bf16).
EnvelopeReport check_envelope(std::span<const float> output, std::span<const float> single,
                              const OutputLayout& layout, const EnvelopeControls& controls);

}  // namespace mlacheck::check
