#pragma once
// e^x, 2^x, ln x and log2 x in double precision from plain arithmetic (FMA, one IEEE division), for
// the float32 softmax of the portable kernels: each is used as fl32(f((double)x)), like the
// reference's fl32 of its own double functions, so the float results agree except where the exact
// value lies within about 2^-50 (relative) of a float32 rounding boundary.
//
// Why not the vendor's exp/log: ROCm's device library is not linked in the AMD device check (a
// library call there is an unresolved call with a dynamic stack), and the reference must not share
// code with the kernels (DESIGN.md), so these are written here, fdlibm style, and tested on the
// host against the reference's detmath (tests/gpu/device_math_test.cpp).
//
// Host + device (MLACHECK_HD): the host build is what the tests check. Callers must not let the
// compiler contract these expressions (gpu/ compiles with --fmad=false on NVIDIA and
// `#pragma clang fp contract(off)` on AMD; plain C++20 g++ does not contract).
#include <cstdint>

#include "quant/hd.h"

namespace mlacheck::gpu::common {

// fl32(a · b + c) with one rounding, on every compiler (the kernels' explicit FMAs).
MLACHECK_HD inline float fma_f(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

namespace math_detail {

MLACHECK_HD inline double fma_d(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return __builtin_fma(a, b, c);  // g++ / clang host, and AMD device code (llvm.fma: v_fma_f64)
#endif
}

MLACHECK_HD constexpr uint64_t bits_of(double x) { return __builtin_bit_cast(uint64_t, x); }
MLACHECK_HD constexpr double double_of(uint64_t u) { return __builtin_bit_cast(double, u); }

// 2^k for -1022 <= k <= 1023, exact.
MLACHECK_HD constexpr double pow2(int k) {
  return double_of(static_cast<uint64_t>(k + 1023) << 52);
}

inline constexpr double kInf = __builtin_huge_val();
// ln 2 in two parts (fdlibm): k * kLn2Hi is exact for |k| < 2^11.
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 0x3DEA39EF35793C76
inline constexpr double kLn2 = 6.93147180559945286227e-01;    // the double nearest ln 2
inline constexpr double kLog2e = 1.44269504088896338700e+00;  // the double nearest log2 e
inline constexpr double kRoundMagic = 6755399441055744.0;     // 1.5 * 2^52: x + it - it = rint(x)

// e^r for |r| <= 0.35 (ln 2 / 2 plus slack): Taylor to r^14 (the next term is < 1e-19).
MLACHECK_HD inline double exp_reduced(double r) {
  double p = 1.0 / 87178291200.0;  // 1/14!
  p = fma_d(p, r, 1.0 / 6227020800.0);
  p = fma_d(p, r, 1.0 / 479001600.0);
  p = fma_d(p, r, 1.0 / 39916800.0);
  p = fma_d(p, r, 1.0 / 3628800.0);
  p = fma_d(p, r, 1.0 / 362880.0);
  p = fma_d(p, r, 1.0 / 40320.0);
  p = fma_d(p, r, 1.0 / 5040.0);
  p = fma_d(p, r, 1.0 / 720.0);
  p = fma_d(p, r, 1.0 / 120.0);
  p = fma_d(p, r, 1.0 / 24.0);
  p = fma_d(p, r, 1.0 / 6.0);
  p = fma_d(p, r, 0.5);
  p = fma_d(p, r, 1.0);
  return fma_d(p, r, 1.0);
}

// p * 2^k for p in [0.7, 1.5] and any k the callers produce (-1080 .. 1030).
MLACHECK_HD inline double scale_by_pow2(double p, int k) {
  if (k > 1023) return p * pow2(1023) * pow2(k - 1023);
  if (k < -1022) return p * pow2(k + 600) * pow2(-600);  // subnormal or zero result
  return p * pow2(k);
}

}  // namespace math_detail

// e^x in double, < 1 ulp of error in [-745, 709.8]; NaN stays NaN, e^-inf = 0, e^inf = inf.
MLACHECK_HD inline double exp_d(double x) {
  using namespace math_detail;
  if (!(x == x)) return x;
  if (x > 709.79) return kInf;
  if (x < -745.2) return 0.0;
  const double k = (x * kLog2e + kRoundMagic) - kRoundMagic;
  const double r = fma_d(-k, kLn2Lo, fma_d(-k, kLn2Hi, x));  // x - k ln 2, |r| <= 0.35
  return scale_by_pow2(exp_reduced(r), static_cast<int>(k));
}

// 2^x in double; same range handling as exp_d.
MLACHECK_HD inline double exp2_d(double x) {
  using namespace math_detail;
  if (!(x == x)) return x;
  if (x > 1024.5) return kInf;
  if (x < -1075.5) return 0.0;
  const double k = (x + kRoundMagic) - kRoundMagic;
  const double f = x - k;  // exact, |f| <= 0.5
  // f ln 2 as a double: its rounding error (< 2^-54 relative) is far below what matters here.
  return scale_by_pow2(exp_reduced(f * kLn2), static_cast<int>(k));
}

// ln x in double (fdlibm e_log.c's reduction and polynomial), < 1 ulp of error; ln 0 = -inf,
// ln of a negative = NaN, ln inf = inf.
MLACHECK_HD inline double log_d(double x) {
  using namespace math_detail;
  if (!(x == x)) return x;
  if (x < 0.0) return double_of(0x7FF8000000000000ull);  // NaN
  if (x == 0.0) return -kInf;
  if (x == kInf) return kInf;
  int e = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: make it normal first
    x *= 18014398509481984.0;         // 2^54
    e = -54;
  }
  const uint64_t u = bits_of(x);
  e += static_cast<int>((u >> 52) & 0x7FF) - 1023;
  double m = double_of((u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1, 2)
  if (m > 1.4142135623730951) {  // sqrt 2: m in [sqrt(2)/2, sqrt 2)
    m *= 0.5;
    e += 1;
  }
  const double f = m - 1.0;  // exact
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (3.999999999940941908e-01 +
                         w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 = z * (6.666666666666735130e-01 +
                         w * (2.857142874366239149e-01 +
                              w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  const double r = t2 + t1;
  const double hfsq = 0.5 * f * f;
  const double dk = static_cast<double>(e);
  return dk * kLn2Hi - ((hfsq - (s * (hfsq + r) + dk * kLn2Lo)) - f);
}

// log2 x = ln x · log2 e in double (the product's rounding is far below float32's).
MLACHECK_HD inline double log2_d(double x) { return log_d(x) * math_detail::kLog2e; }

// The float32 softmax functions of the kernels: b^x and log_b x for b = e or 2, each the float32
// rounding of the double value (as the reference's exp_b / log_b).
MLACHECK_HD inline float exp_base(bool base2, float x) {
  const double d = x;
  return static_cast<float>(base2 ? exp2_d(d) : exp_d(d));
}
MLACHECK_HD inline float log_base(bool base2, float x) {
  const double d = x;
  return static_cast<float>(base2 ? log2_d(d) : log_d(d));
}
// A base-2 LSE as a natural log: fl32(lse · ln 2), as the reference reports it.
MLACHECK_HD inline float natural_lse(bool base2, float lse) {
  return base2 ? static_cast<float>(static_cast<double>(lse) * math_detail::kLn2) : lse;
}

}  // namespace mlacheck::gpu::common
