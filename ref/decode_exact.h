#pragma once
// The exact mode of the CPU reference: MLA decode in fp64 over the bf16 source data, the ground
// truth every recipe and kernel is measured against (DESIGN.md "Three errors, not one").
//
// For query row (query i of request b, head h) with n = batch.visible_kv(b, i) visible keys:
//   s_t = sm_scale · Σ_d q[d]·k_t[d]  (sm_scale = 1/24, d over 576), m = max_t s_t,
//   p_t = e^(s_t - m), l = Σ_t p_t, out = Σ_t p_t·v_t / l (v_t = k_t[0:512]), lse = m + ln l.
// Every sum runs in index order (d = 0..575, t = 0..n-1) in double, e^ and ln come from detmath.h,
// and no product is fused into an FMA (ref/ is built with -ffp-contract=off), so the result has
// the same bits for any thread count and on any x86-64 machine (kernels.h says how the vectorized
// products keep that order). out and lse are then rounded to float32.
// A row with no visible key (an empty sequence, or a causally empty query when q_len > kv_len)
// gets out = 0 and lse = -inf.
#include <cstdint>
#include <span>
#include <vector>

#include "problem/batch.h"
#include "ref/progress.h"

namespace mlacheck::ref {

struct ExactResult {
  std::vector<float> out;  // [total_q, 16, 512]
  std::vector<float> lse;  // [total_q, 16], natural log of the scaled scores' sum of exponentials
};

// q_bf16: [total_q, 16, 576] bf16 bits; kv_bf16: [batch.cache_rows(), 576] bf16 bits. Throws
// problem::ProblemError when a size does not match the batch. Parallel over requests (OpenMP).
ExactResult decode_exact(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                         std::span<const uint16_t> kv_bf16, Progress* progress = nullptr);

}  // namespace mlacheck::ref
