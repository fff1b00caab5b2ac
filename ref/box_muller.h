#pragma once
// The arithmetic of one normal draw, as templates over a lane type, so the scalar path
// (ref/random.cpp) and the 8-lane kernels (ref/kernels_impl.inc) run the same code. Definitions of
// the draw itself (counter layout, uniforms) are in ref/random.h.
#include <cmath>
#include <cstdint>

#include "ref/detmath.h"
#include "ref/isa.h"

namespace mlacheck::ref {
inline namespace MLACHECK_REF_ISA {

// Philox4x32-10 restated on 64-bit lanes that hold 32-bit words (W = uint64_t or a vector of it),
// so that several counters run side by side. Same rounds and constants as Random123's
// philox4x32_R(10, ...); tests/ref/random_test.cpp checks it against Random123 bit for bit.
template <class W>
[[gnu::always_inline]] inline void philox4x32_10(W& c0, W& c1, W& c2, W& c3, W k0, W k1) {
  // uint64_t constants (not unsigned long long), so that GCC and clang both take them next to a
  // vector of uint64_t.
  constexpr uint64_t kMask = 0xFFFFFFFF;
  constexpr uint64_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;  // Weyl key increments
  constexpr uint64_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;  // round multipliers
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // bumpkey
      k0 = (k0 + kW0) & kMask;
      k1 = (k1 + kW1) & kMask;
    }
    const W p0 = c0 * kM0;  // 32 x 32 -> 64 bits: exact in a 64-bit lane
    const W p1 = c2 * kM1;
    const W n0 = (p1 >> 32) ^ c1 ^ k0;
    const W n2 = (p0 >> 32) ^ c3 ^ k1;
    c1 = p1 & kMask;
    c3 = p0 & kMask;
    c0 = n0;
    c2 = n2;
  }
}

// Box–Muller from the four words of one Philox block (random.h): V = double or a vector of
// doubles, U its 64-bit integer type; `sqrt_lanes` is the IEEE square root of each lane.
template <class V, class U, class Sqrt>
[[gnu::always_inline]] inline void box_muller(U w0, U w1, U w2, U w3, Sqrt sqrt_lanes, V& z0,
                                              V& z1) {
  constexpr double k2pow52 = 1.0 / 4503599627370496.0;  // 2^-52
  const U a = (w1 << 32) | w0;
  const U c = (w3 << 32) | w2;
  const V u1 = (detmath::detail::u64_to_double<V>(a >> 12) + 1.0) * k2pow52;  // (0, 1]
  const V u2 = detmath::detail::u64_to_double<V>(c >> 12) * k2pow52;          // [0, 1)
  const V r = sqrt_lanes(detmath::detail::log_normal<V, U>(u1) * -2.0);
  V s, co;
  detmath::detail::sincos_turns(u2, s, co);
  z0 = r * co;
  z1 = r * s;
}

}  // namespace MLACHECK_REF_ISA
}  // namespace mlacheck::ref
