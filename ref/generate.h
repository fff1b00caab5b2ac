#pragma once
// The deterministic input generator: q and the bf16 KV cache of a CaseSpec, the same bits for
// any thread count and on any machine. Each value is a pure function of (seed, stream, logical
// index) through Philox (ref/random.h, ref/streams.h), so a GPU can regenerate it element by
// element. q element (row, head, d) has index (row·16 + head)·576 + d; KV element (key, d) has
// index g·576 + d where g = kv_indptr[b] + t is the key's logical index (ref/layout.h).
//
// Profiles (bf16(x) = round to nearest even; fl32 = float32 arithmetic):
// - harness: q, kv = bf16(fl32(bf16(z) · fl32(0.02))) with z ~ N(0,1) drawn as float32 —
//   torch.randn(..., bfloat16) * 0.02 (NUMERICS §6.3). Logits are tiny (|s| < 0.1).
// - peaked: attention concentrated on a few keys. Each request b has a direction u_b ~ N(0,1)^576;
//   q = bf16(z + u_b) and four "hot" keys at seeded positions hold k = bf16(c_j · u_b) with
//   c_j = 0.625, 0.5625, 0.5, 0.4375, giving logits near 15, 13.5, 12, 10.5 against ~0 for the
//   other (harness) keys: the softmax is nearly one-hot, and its max, rescaling and P rounding
//   are exercised (bf16 / fp8 P of exp(s - m) is 0 for all but the hot keys).
// - outliers: harness q; in the cache, 8 channels (4 of the 64 rope dims, 4 of the 512 latent
//   ones, chosen from the seed) have their scale multiplied by a factor in [10, 100) (log-uniform),
//   as in real DeepSeek caches; the per-tensor FP8 scale then follows the outliers.
// - boundary: values placed on rounding boundaries of the quantizers. Element 0 of each tensor is
//   A = 0.21875 = 448·2^-11 and no |value| exceeds it, so the harness FP8 scale is exactly 2^-11
//   and x / s is exact. In each block of 32 one element (seeded position) is the block maximum M:
//   6·2^k (E2M1 full range), 1.75·2^j (exactly where the E8M0 exponent rounds up), the bf16 just
//   below it, or 2^j. The other elements are, by seeded choice: midpoints between adjacent FP8
//   codes (times 2^-11), the same ± one bf16 ulp, E2M1 ties (0.25 … 5.0 times the block's 2^e),
//   the same ± one bf16 ulp, exact FP8 grid points, or zero; all <= M in magnitude, random sign.
#include <cstdint>
#include <vector>

#include "problem/batch.h"
#include "ref/case_spec.h"
#include "ref/progress.h"

namespace mlacheck::ref {

struct Inputs {
  problem::Batch batch;
  std::vector<uint16_t> q;   // [total_q, 16, 576] bf16 bits
  std::vector<uint16_t> kv;  // [batch.cache_rows(), 576] bf16 bits (rows of no key: 0 or NaN)
};

// Throws problem::ProblemError for an impossible spec (ref/layout.h). Parallel (OpenMP).
Inputs generate(const CaseSpec& spec, Progress* progress = nullptr);

}  // namespace mlacheck::ref
