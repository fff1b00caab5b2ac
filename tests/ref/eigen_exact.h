#pragma once
// A second exact reference for MLA decode, written with Eigen's fp64 products (issue 12 item 4):
// an oracle for ref::decode_exact that shares none of its code. ref/ blocks its own products so
// that its bits never depend on the machine (ref/kernels.h); this one lets Eigen choose blocking,
// vector width and FMA, and uses the C library's exp and log instead of ref/detmath.h. Only what
// defines the inputs is shared: the bf16 widening (quant/bf16.h) and the batch layout
// (problem/batch.h: kv_row, and visible_kv for the causal rule of q_len > 1).
//
// The formulas are NUMERICS §6.1 / ref/decode_exact.h's: for query row (query i of request b,
// head h) with n = visible_kv(b, i) keys, s_t = (q·k_t)/24 over the 576 dims (sm_scale =
// 1/sqrt(576), problem/shape.h), m = max s_t, p_t = e^(s_t - m), l = Σ p_t,
// out = Σ p_t v_t / l with v_t = k_t[0:512], lse = m + ln l. No visible key: out 0, lse -inf.
//
// Each value comes with err, a bound on how far ANY fp64 evaluation of those formulas can lie
// from the real-number result: every sum in any order, any FMA use, exp within kExpUlps and log
// within kLogUlps (eigen_exact.cpp derives it term by term). ref/'s fp64 result and this one both
// obey it, so they differ by at most 2 err before ref/ rounds to float32.
#include <cstdint>
#include <span>
#include <vector>

#include "problem/batch.h"

namespace mlacheck::ref::test {

struct EigenExact {
  std::vector<double> out;      // [total_q, 16, 512]
  std::vector<double> lse;      // [total_q, 16], natural log; -inf for a row with no key
  std::vector<double> out_err;  // [total_q, 16, 512]  |fp64 out - real out| <= out_err
  std::vector<double> lse_err;  // [total_q, 16]
};

// q: [total_q, 16, 576] bf16 bits; kv: [batch.cache_rows(), 576] bf16 bits (the sizes are
// checked: std::invalid_argument). Throws std::domain_error when a row's scores may span more
// than the fp64 exponent range of e^x (the error bound assumes no p_t underflows). Parallel over
// requests (OpenMP); Eigen's own threading is off.
EigenExact eigen_exact(const problem::Batch& batch, std::span<const uint16_t> q,
                       std::span<const uint16_t> kv);

}  // namespace mlacheck::ref::test
