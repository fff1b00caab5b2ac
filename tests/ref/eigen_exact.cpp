#include "tests/ref/eigen_exact.h"

// Parallelism comes from the loop over requests; Eigen must not nest its own inside it.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>

#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::ref::test {
namespace {

constexpr int H = problem::kNumHeads, D = problem::kQkDim, DV = problem::kVDim;
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// --- The error bound err (eigen_exact.h), per query row and head --------------------------------
// u = 2^-53 (fp64 unit roundoff); gamma(k) = k u / (1 - k u) bounds the relative error of k
// roundings in a row (Higham, Accuracy and Stability of Numerical Algorithms, Lemma 3.1), and
// |fl(sum of k terms) - sum| <= gamma(k - 1) sum|terms| for ANY order of the additions (§4.2).
// With n visible keys and A = ||q|| max_t ||k_t|| / 24 (so |s_t| <= A, Cauchy-Schwarz):
//  1. score: the 576 products q_d k_d are exact in fp64 (bf16 has 8 significant bits), the sum
//     rounds 575 times and the scale once (here / 24) or twice (ref/: fl(1/24), then a product):
//     |s^ - s| <= sigma = gamma(577) A  (sum|q_d k_d| <= ||q|| ||k|| <= 24 A).
//  2. d_t = s_t - m: m^ is the max of the s^ (exact), so |d^ - d| <= Dd = 2 sigma + u (2A + 2 sigma).
//  3. p_t = e^d_t within kExpUlps ulps (one ulp <= 2u relative): p^ = p (1 + theta) with
//     |theta| <= eps_p = e^Dd (1 + 2 kExpUlps u) - 1, as long as no p_t underflows (2A < 708).
//  4. l = sum p_t and o_c = sum p_t v_tc: n products/additions each, so both are within
//     eps_sum = (1 + eps_p)(1 + gamma(n)) - 1 of their sums of |terms| (l: of l itself).
//  5. out_c = fl(o^_c / l^): (o^ - o - out l beta) / (l (1 + beta)) with |beta| <= eps_sum gives
//     |out^ - out| <= S_c (2 eps_sum / (1 - eps_sum) (1 + u) + u), S_c = sum_t p_t |v_tc| / l
//     (the weighted mean of |v|, >= |out_c|), computed here from p^ and so inflated by
//     (1 + eps_sum) / ((1 - eps_sum)(1 - u)) to bound the real one.
//  6. lse = fl(m^ + log(l^)): |m^ - m| <= sigma; |ln l^ - ln l| <= lam = -log1p(-eps_sum); log
//     within kLogUlps of ln l^ <= ln n + eps_sum (l in [1, n]); one rounding of the sum, whose
//     magnitude is <= A + sigma + ln n + eps_sum + lam:
//     err = sigma + lam + 2 kLogUlps u (ln n + eps_sum) + u (A + sigma + ln n + eps_sum + lam).
// The norms behind A are themselves computed in fp64: A is inflated by (1 + gamma(2·576 + 4))
// (two sums of 576 squares, two square roots, a product and the division by 24).
constexpr double kU = 0x1p-53;
// Accuracy of exp and log, in ulps of the result, that both implementations are assumed to keep:
// glibc's exp and log are within 1 ulp on x86-64 (glibc manual, "Known Maximum Errors in Math
// Functions"), ref/detmath.h's exp ~1 ulp and log ~3 ulp; twice the larger, since detmath's
// figures are approximate ("~").
constexpr double kExpUlps = 2, kLogUlps = 6;
// e^x of a double is a normal number for x > -708 (e^-708 = 3.3e-308 > DBL_MIN = 2.2e-308).
constexpr double kNoUnderflow = 708;

double gamma(double k) { return k * kU / (1 - k * kU); }

struct RowBound {
  double sigma, A, eps_sum;
};

RowBound row_bound(double q_norm, double k_norm_max, int64_t n) {
  RowBound r{};
  r.A = q_norm * k_norm_max / 24.0 * (1 + gamma(2.0 * D + 4));
  r.sigma = gamma(D + 1) * r.A;
  if (2 * r.A + 2 * r.sigma >= kNoUnderflow)
    throw std::domain_error("eigen_exact: scores may span " + std::to_string(2 * r.A) +
                            " (>= 708): some e^(s - m) could underflow, which its bound excludes");
  const double dd = 2 * r.sigma + kU * (2 * r.A + 2 * r.sigma);
  const double eps_p = std::exp(dd) * (1 + 2 * kExpUlps * kU) - 1;
  r.eps_sum = (1 + eps_p) * (1 + gamma(static_cast<double>(n))) - 1;
  return r;
}

// Query rows of request b, written into r.
void decode_request(const problem::Batch& batch, int64_t b, std::span<const uint16_t> q,
                    std::span<const uint16_t> kv, EigenExact& r) {
  const int64_t q_len = batch.q_len(b);
  const int64_t n_max = batch.visible_kv(b, q_len - 1);  // the last query sees the most keys
  Mat K(n_max, D);
  for (int64_t t = 0; t < n_max; ++t) {
    const uint16_t* row = kv.data() + batch.kv_row(b, t) * D;
    for (int d = 0; d < D; ++d) K(t, d) = quant::bf16_to_f32(row[d]);
  }
  const double k_norm_max = n_max > 0 ? K.rowwise().norm().maxCoeff() : 0.0;

  for (int64_t i = 0; i < q_len; ++i) {
    const int64_t token = batch.qo_indptr()[b] + i;
    const int64_t n = batch.visible_kv(b, i);
    double* out = r.out.data() + token * H * DV;
    double* out_err = r.out_err.data() + token * H * DV;
    if (n == 0) {
      for (int h = 0; h < H; ++h) {
        r.lse[token * H + h] = -std::numeric_limits<double>::infinity();
        r.lse_err[token * H + h] = 0;
      }
      continue;  // out and out_err stay 0
    }
    Mat Q(H, D);
    const uint16_t* qrow = q.data() + token * H * D;
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) Q(h, d) = quant::bf16_to_f32(qrow[h * D + d]);
    const auto keys = K.topRows(n);
    const auto values = keys.leftCols(DV);

    const Mat S = (Q * keys.transpose()) / 24.0;  // [16, n]
    const Eigen::VectorXd m = S.rowwise().maxCoeff();
    const Mat P = (S.colwise() - m).unaryExpr([](double x) { return std::exp(x); });
    const Eigen::VectorXd l = P.rowwise().sum();
    const Mat O = P * values;                // [16, 512] un-normalized
    const Mat W = P * values.cwiseAbs();     // [16, 512] sum p |v|
    const Eigen::VectorXd q_norm = Q.rowwise().norm();

    for (int h = 0; h < H; ++h) {
      const RowBound rb = row_bound(q_norm(h), k_norm_max, n);
      const double es = rb.eps_sum;
      const double s_inflate = (1 + es) / ((1 - es) * (1 - kU));
      const double per_s = 2 * es / (1 - es) * (1 + kU) + kU;
      for (int c = 0; c < DV; ++c) {
        out[h * DV + c] = O(h, c) / l(h);
        out_err[h * DV + c] = per_s * s_inflate * W(h, c) / l(h);
      }
      const double lam = -std::log1p(-es);
      const double ln_n = std::log(static_cast<double>(n));
      r.lse[token * H + h] = m(h) + std::log(l(h));
      r.lse_err[token * H + h] = rb.sigma + lam + 2 * kLogUlps * kU * (ln_n + es) +
                                 kU * (rb.A + rb.sigma + ln_n + es + lam);
    }
  }
}

}  // namespace

EigenExact eigen_exact(const problem::Batch& batch, std::span<const uint16_t> q,
                       std::span<const uint16_t> kv) {
  const auto rows_q = static_cast<std::size_t>(batch.total_q());
  if (q.size() != rows_q * H * D)
    throw std::invalid_argument("eigen_exact: q has " + std::to_string(q.size()) + " values, the batch needs " +
                                std::to_string(rows_q * H * D));
  if (kv.size() != static_cast<std::size_t>(batch.cache_rows()) * D)
    throw std::invalid_argument("eigen_exact: kv has " + std::to_string(kv.size()) + " values, the cache " +
                                std::to_string(batch.cache_rows()) + " rows of 576");
  EigenExact r;
  r.out.assign(rows_q * H * DV, 0.0);
  r.out_err.assign(rows_q * H * DV, 0.0);
  r.lse.assign(rows_q * H, 0.0);
  r.lse_err.assign(rows_q * H, 0.0);
  std::exception_ptr failure;
  const int64_t requests = batch.num_requests();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < requests; ++b) {
    try {
      decode_request(batch, b, q, kv, r);
    } catch (...) {
#pragma omp critical(eigen_exact_failure)
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return r;
}

}  // namespace mlacheck::ref::test
