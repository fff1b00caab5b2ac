#pragma once
// Counter-based random draws: every value is a pure function of (seed, stream, index), computed by
// Philox4x32-10 (Random123), so the generator gives the same bits for any thread count, on any
// machine, and can be ported to one GPU thread per element unchanged.
//
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (index low 32 bits, index high 32 bits, stream, 0)
//
// `stream` names what is drawn (a tensor, or a layout decision: generate.cpp lists them), so two
// tensors of one case never share draws.
//
// Normals: Box–Muller on two 52-bit uniforms from one Philox block, u1 in (0, 1], u2 in [0, 1):
// z0 = sqrt(-2 ln u1) cos 2πu2, z1 = sqrt(-2 ln u1) sin 2πu2 (|z| <= 8.5). Element i of a stream
// uses block i / 2, z0 for even i. Why Box–Muller: it is exact in distribution (a sum of uniforms
// is not normal enough in the tails; an inverse-CDF table brings its own interpolation rules), and
// it is PyTorch's method, so the harness profile has the same kind of tails as the competition's
// data. Its log and sin/cos come from detmath.h, not libm, whose last ulp differs between versions.
#include <cstdint>
#include <span>
#include <utility>

#include <Random123/philox.h>

namespace mlacheck::ref {

// The four 32-bit words of Philox block `index` of `stream` (Random123's Philox4x32-10).
inline r123::Philox4x32::ctr_type philox_block(uint64_t seed, uint32_t stream, uint64_t index) {
  const r123::Philox4x32::key_type key = {
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, 0u}};
  return r123::Philox4x32{}(ctr, key);
}

// Word `w` (0..3) of block `index`: a uniform 32-bit integer.
inline uint32_t random_u32(uint64_t seed, uint32_t stream, uint64_t index, int w = 0) {
  return philox_block(seed, stream, index)[w];
}

// A uniform double in [0, 1) from word pair (0, 1) of block `index` (52 bits).
double random_unit(uint64_t seed, uint32_t stream, uint64_t index);

// The two N(0,1) draws of block `pair`.
std::pair<double, double> normal_pair(uint64_t seed, uint32_t stream, uint64_t pair);

// The N(0,1) draw of element `i` of `stream`.
double normal_at(uint64_t seed, uint32_t stream, uint64_t i);

// out[j] = normal_at(seed, stream, first + j) for every j, bit for bit, computed 8 blocks at a
// time with vector instructions where the CPU has them (the lanes do the same IEEE operations).
void fill_normals(uint64_t seed, uint32_t stream, uint64_t first, std::span<double> out);

}  // namespace mlacheck::ref
