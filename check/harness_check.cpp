#include "check/harness_check.h"

#include <cmath>
#include <stdexcept>

#include "quant/bf16.h"

namespace mlacheck::check {
namespace {

// tol = atol + rtol * |r| as PyTorch evaluates it on a bf16 tensor: each op in float32 (Python
// floats become float32 first), each result rounded to bf16 (NUMERICS §2.3, §6.4).
float bf16_tolerance(float ref_abs, HarnessTolerance tol) {
  const auto rtol = static_cast<float>(tol.rtol), atol = static_cast<float>(tol.atol);
  const float scaled = quant::bf16_to_f32(quant::f32_to_bf16(rtol * ref_abs));
  return quant::bf16_to_f32(quant::f32_to_bf16(atol + scaled));
}

float diff_of(float got, float ref) { return std::fabs(got - ref); }

}  // namespace

bool harness_element_fails(float got, uint16_t ref_bf16, HarnessTolerance tol) {
  const float ref = quant::bf16_to_f32(ref_bf16);
  // diff > tol is false when either side is NaN: NaN and Inf are judged by the xor rules alone.
  const bool beyond = diff_of(got, ref) > bf16_tolerance(std::fabs(ref), tol);
  const bool nan = std::isnan(got) != std::isnan(ref);
  const bool pos_inf = (std::isinf(got) && got > 0) != (std::isinf(ref) && ref > 0);
  const bool neg_inf = (std::isinf(got) && got < 0) != (std::isinf(ref) && ref < 0);
  return beyond || nan || pos_inf || neg_inf;
}

HarnessReport harness_check(std::span<const float> got, std::span<const uint16_t> ref_bf16,
                            const OutputLayout& layout, HarnessTolerance tol) {
  if (got.size() != ref_bf16.size() || got.size() != static_cast<std::size_t>(layout.elements()))
    throw std::invalid_argument("harness_check: sizes differ");
  HarnessReport r;
  r.tolerance = tol;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float d = diff_of(got[i], quant::bf16_to_f32(ref_bf16[i]));
    if (std::isnan(d) || std::isnan(r.max_error))
      r.max_error = std::nanf("");
    else if (d > r.max_error)
      r.max_error = d;
    if (!harness_element_fails(got[i], ref_bf16[i], tol)) continue;
    ++r.mismatches;
    if (r.first.size() < HarnessReport::kPrinted)
      r.first.push_back({static_cast<int64_t>(i), layout.position(static_cast<int64_t>(i)), got[i],
                         quant::bf16_to_f32(ref_bf16[i])});
  }
  r.pass = r.mismatches == 0;
  return r;
}

}  // namespace mlacheck::check
