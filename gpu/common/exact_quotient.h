#pragma once
// fl32(a / b), IEEE division's result, for many dividends a of one divisor b without a division per
// quotient. The kernels divide each split's output by its row sum l (fl32(acc / l), as the
// reference does); CUDA's div.rn is a short sequence, a range check and a branch to a slow path per
// quotient, so a thread's 32 quotients in the hopper epilogue could not overlap. (Measured on the
// H200, device runs 2-4 of 2026-12-03, docs/PERF.md: this removed about 500 of the 5400 cycles the
// epilogue of a token took; the branch per element choosing its destination was the larger part.)
//
// The sequence (Markstein's theorem, the correction step of IA-64's and CUDA's own division): with
// r = RN(1/b) (correctly rounded, computed once) and q = RN(a r) (within one ulp of a/b), the
// residual a - q b is exact (one FMA) and RN(q + (a - q b) r) = RN(a / b), as long as nothing on the
// way underflows or overflows. In_window says when that holds with room: |a| and |b| in
// [2^-60, 2^60] (or a = ±0) keep a/b in [2^-120, 2^120], a normal float, and the residual, a
// multiple of ulp(a) · 2^-24 or so, above float32's normal range. Outside it (NaN, Inf, 0 or tiny
// divisors, huge or tiny dividends) the caller divides. Host + device (MLACHECK_HD): the host test
// (tests/gpu/device_math_test.cpp) checks it against IEEE division, the device uses the same
// correctly rounded operations (rcp.rn, mul.rn, fma.rn).
#include <cstdint>

#include "gpu/common/device_math.h"
#include "quant/hd.h"

namespace mlacheck::gpu::common {

struct ExactDivisor {
  float b = 1.0f;
  float r = 1.0f;  // RN(1 / b)
};

MLACHECK_HD inline ExactDivisor exact_divisor(float b) {
#if defined(__CUDA_ARCH__)
  return {b, __frcp_rn(b)};
#else
  return {b, 1.0f / b};
#endif
}

namespace quotient_detail {
// |x| in [2^-60, 2^60], by the exponent field: biased exponents 67 .. 187 (NaN and Inf have 255).
MLACHECK_HD inline bool magnitude_in_window(float x) {
  const uint32_t e = (__builtin_bit_cast(uint32_t, x) >> 23) & 0xFFu;
  return e >= 127 - 60 && e < 127 + 60;
}
}  // namespace quotient_detail

MLACHECK_HD inline bool divisor_in_window(float b) { return quotient_detail::magnitude_in_window(b); }
MLACHECK_HD inline bool dividend_in_window(float a) {
  return a == 0.0f || quotient_detail::magnitude_in_window(a);
}

// RN(a / b) for a divisor and a dividend both in their windows.
MLACHECK_HD inline float exact_quotient(float a, const ExactDivisor& d) {
#if defined(__CUDA_ARCH__)
  const float q = __fmul_rn(a, d.r);
#else
  const float q = a * d.r;
#endif
  const float residual = fma_f(-q, d.b, a);
  return a == 0.0f ? q : fma_f(residual, d.r, q);  // ±0 / b: q = ±0 · r has IEEE's sign
}

}  // namespace mlacheck::gpu::common
