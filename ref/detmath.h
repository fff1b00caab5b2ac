#pragma once
// Deterministic exp, exp2, log, log2 and sin/cos of 2πu in double precision, written with + − × ÷,
// fixed polynomials and exact bit manipulation only.
//
// Why not <cmath>: std::exp, std::log, std::cos come from the C library, and glibc versions (and
// other libms) differ in the last ulp. The reference promises the same bits on every x86-64
// machine, so every transcendental it evaluates is one of these. Each result is the same on any
// IEEE-754 machine as long as the compiler neither contracts a·b + c into an FMA nor reassociates:
// ref/ is built with -ffp-contract=off and without -ffast-math (ref/CMakeLists.txt); include this
// header only from code built that way. Accuracy: exp/exp2 ~1 ulp, log/log2 ~3 ulp, sin/cos
// ~2e-16 absolute — far below anything the reference rounds to (float32 or bf16).
//
// The cores in `detail` are templates over V = double or an 8-lane GCC vector of doubles (ref/
// random.cpp), written without branches (selects only), so the scalar and the vector
// instantiation perform the same IEEE operations on every lane and give the same bits.
#include <cstdint>
#include <limits>

#include "ref/isa.h"

namespace mlacheck::ref::detmath {
inline namespace MLACHECK_REF_ISA {  // one copy per instruction-set TU (ref/isa.h)

namespace detail {

template <class To, class From>
[[gnu::always_inline]] inline To bit_cast(const From& x) {
  return __builtin_bit_cast(To, x);
}

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^21 (kLn2Hi has 32 significant bits).
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
inline constexpr double kLn2 = 6.93147180559945286227e-01;
inline constexpr double kLog2e = 1.44269504088896338700e+00;
inline constexpr double kTwoPi = 6.28318530717958623200e+00;
inline constexpr double kSqrt2 = 1.41421356237309514547e+00;
inline constexpr double kTwo52 = 4503599627370496.0;  // 2^52
// Bit patterns as uint64_t (not unsigned long long): GCC and clang then accept them next to a
// vector of uint64_t.
inline constexpr uint64_t kTwo52Bits = 0x4330000000000000;  // bits of 2^52
inline constexpr uint64_t kFracMask = 0x000FFFFFFFFFFFFF;
inline constexpr uint64_t kOneBits = 0x3FF0000000000000;    // bits of 1.0

// floor(x) for 0 <= x < 2^51: x + 2^52 - 2^52 rounds to an integer, minus 1 if it rounded up.
template <class V>
[[gnu::always_inline]] inline V floor_small(V x) {
  const V t = (x + kTwo52) - kTwo52;
  return t > x ? t - 1.0 : t;
}

// The double value of an integer 0 <= n <= 2^52 held in 64-bit lanes: 2^52 + n has n as its
// fraction, so subtracting 2^52 leaves n exactly.
template <class V, class U>
[[gnu::always_inline]] inline V u64_to_double(U n) {
  return bit_cast<V>(n + kTwo52Bits) - kTwo52;
}

// 2^k as a double for -1022 <= k <= 1023 (scalar only).
inline double pow2(int k) { return bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52); }

// p * 2^k, rounded once even when the result is subnormal (the first product is exact).
inline double scale2(double p, int k) {
  if (k > 1023) return p * pow2(1023) * pow2(k - 1023);
  if (k >= -1022) return p * pow2(k);
  return (p * pow2(k + 600)) * pow2(-600);
}

// e^r for |r| <= 0.35: Taylor series to degree 13 by Horner (truncation < 4e-18 relative).
template <class V>
[[gnu::always_inline]] inline V exp_poly(V r) {
  V p = r * (1.0 / 6227020800.0) + 1.0 / 479001600.0;  // 1/13!, 1/12!
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  return p * r + 1.0;
}

// e * ln 2 + log(m) for m in [sqrt(1/2), sqrt(2)]: with s = (m-1)/(m+1), log m = 2 atanh s
// = 2s (1 + s²/3 + s⁴/5 + ...), |s| <= 0.1716; 11 terms leave < 1e-19 relative.
template <class V>
[[gnu::always_inline]] inline V log_core(V m, V e) {
  const V f = m - 1.0;  // exact (Sterbenz)
  const V s = f / (f + 2.0);
  const V z = s * s;
  V p = z * (1.0 / 21.0) + 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  p = p * z + 1.0;
  const V log_m = (s + s) * p;
  return e * kLn2Hi + (e * kLn2Lo + log_m);
}

// log x for a normal x > 0 (no special cases): x = 2^e · m, m in [sqrt(1/2), sqrt(2)].
// U is the matching 64-bit unsigned type (uint64_t or a vector of it).
template <class V, class U>
[[gnu::always_inline]] inline V log_normal(V x) {
  const U bits = bit_cast<U>(x);
  V e = u64_to_double<V>(bits >> 52) - 1023.0;
  V m = bit_cast<V>((bits & kFracMask) | kOneBits);  // [1, 2)
  const auto big = m > kSqrt2;
  m = big ? m * 0.5 : m;  // exact
  e = big ? e + 1.0 : e;
  return log_core(m, e);
}

// sin and cos of θ for 0 <= θ <= π/4: Taylor to degree 17 / 16 (truncation < 5e-17).
template <class V>
[[gnu::always_inline]] inline void sincos_poly(V t, V& s, V& c) {
  const V z = t * t;
  // sin t = t + t·z·q, q = -1/3! + z/5! - z²/7! + ... + z⁷/17!
  V q = z * (1.0 / 355687428096000.0) - 1.0 / 1307674368000.0;  // 1/17!, -1/15!
  q = q * z + 1.0 / 6227020800.0;                                 // 1/13!
  q = q * z - 1.0 / 39916800.0;                                   // -1/11!
  q = q * z + 1.0 / 362880.0;                                     // 1/9!
  q = q * z - 1.0 / 5040.0;                                       // -1/7!
  q = q * z + 1.0 / 120.0;                                        // 1/5!
  q = q * z - 1.0 / 6.0;                                          // -1/3!
  s = t + t * (z * q);
  // cos t = 1 + z·r, r = -1/2! + z/4! - ... + z⁷/16!
  V r = z * (1.0 / 20922789888000.0) - 1.0 / 87178291200.0;  // 1/16!, -1/14!
  r = r * z + 1.0 / 479001600.0;                               // 1/12!
  r = r * z - 1.0 / 3628800.0;                                 // -1/10!
  r = r * z + 1.0 / 40320.0;                                   // 1/8!
  r = r * z - 1.0 / 720.0;                                     // -1/6!
  r = r * z + 1.0 / 24.0;                                      // 1/4!
  r = r * z - 0.5;                                             // -1/2!
  c = z * r + 1.0;
}

// sin(2πu) and cos(2πu) for u in [0, 1) ("turns"): the quadrant and the reflection about π/4 are
// taken on u, where they are exact, so the polynomial only sees angles in [0, π/4].
template <class V>
[[gnu::always_inline]] inline void sincos_turns(V u, V& s, V& c) {
  const V qf = floor_small(u * 4.0);  // quadrant 0..3
  V f = u - qf * 0.25;                // [0, 1/4), exact
  const auto reflect = f > 0.125;
  f = reflect ? 0.25 - f : f;  // sin(π/2 - θ) = cos θ
  V sp, cp;
  sincos_poly(f * kTwoPi, sp, cp);
  const V sf = reflect ? cp : sp;
  const V cf = reflect ? sp : cp;
  // angle = quadrant·π/2 + 2πf
  const auto odd = (qf - 2.0) * (qf - 2.0) == 1.0;  // qf is 1 or 3 (exact arithmetic)
  const auto lower = qf >= 2.0;  // quadrants 2, 3: both signs flip
  const V s1 = odd ? cf : sf;
  const V c1 = odd ? -sf : cf;
  s = lower ? -s1 : s1;
  c = lower ? -c1 : c1;
}

}  // namespace detail

// e^x; +Inf above 709.78, +0 below -745.13, NaN for NaN.
inline double exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < -745.1332191019412) return 0.0;
  const double k = detail::floor_small(x * detail::kLog2e + 0.5 + 2048.0) - 2048.0;
  const double r = (x - k * detail::kLn2Hi) - k * detail::kLn2Lo;
  return detail::scale2(detail::exp_poly(r), static_cast<int>(k));
}

// 2^x; exact for integer x in range.
inline double exp2(double x) {
  if (x != x) return x;
  if (x >= 1024.0) return std::numeric_limits<double>::infinity();
  if (x < -1075.0) return 0.0;
  const double k = detail::floor_small(x + 0.5 + 2048.0) - 2048.0;
  const double r = (x - k) * detail::kLn2;  // x - k is exact
  return detail::scale2(detail::exp_poly(r), static_cast<int>(k));
}

// Natural log; -Inf for ±0, NaN for x < 0 or NaN, +Inf for +Inf.
inline double log(double x) {
  if (x != x || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  if (x < std::numeric_limits<double>::min())  // subnormal: scale by 2^54 (exact) first
    return detail::log_normal<double, uint64_t>(x * 18014398509481984.0) - 54.0 * detail::kLn2;
  return detail::log_normal<double, uint64_t>(x);
}

// log2; exact for powers of two.
inline double log2(double x) {
  if (x != x || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  double extra = 0.0;
  if (x < std::numeric_limits<double>::min()) {
    x *= 18014398509481984.0;  // 2^54
    extra = -54.0;
  }
  const uint64_t bits = detail::bit_cast<uint64_t>(x);
  double e = static_cast<double>(static_cast<int>(bits >> 52) - 1023) + extra;
  double m = detail::bit_cast<double>((bits & detail::kFracMask) | detail::kOneBits);
  if (m > detail::kSqrt2) {
    m *= 0.5;
    e += 1.0;
  }
  // log_core with e = 0 is log m alone; log2 x = e + log m / ln 2, exact when m = 1.
  return e + detail::log_core(m, 0.0) * detail::kLog2e;
}

inline void sincos_turns(double u, double& s, double& c) { detail::sincos_turns(u, s, c); }

}  // namespace MLACHECK_REF_ISA
}  // namespace mlacheck::ref::detmath
