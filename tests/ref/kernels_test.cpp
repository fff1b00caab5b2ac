// ref/kernels.h: every instruction-set table this CPU runs gives the same bits, and the products
// are the plain triple loop's.
#include <cmath>
#include <limits>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "ref/detmath.h"
#include "ref/kernels.h"
#include "ref/random.h"

namespace mlacheck::ref {
namespace {

std::vector<const Kernels*> available() {
  std::vector<const Kernels*> k;
  for (Isa isa : {Isa::baseline, Isa::avx2, Isa::avx512})
    if (const Kernels* t = kernels_for(isa)) k.push_back(t);
  return k;
}

// A(i, k) = A[i * ar + k * ac]: row-major (ar = K, ac = 1) or column-major (ar = 1, ac = M).
template <class T>
void plain_gemm(int64_t M, int64_t N, int64_t K, const std::vector<T>& A, int64_t ar, int64_t ac,
                const std::vector<T>& B, std::vector<T>& C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = C[i * N + j];
      for (int64_t k = 0; k < K; ++k) acc += A[i * ar + k * ac] * B[k * N + j];
      C[i * N + j] = acc;
    }
}

template <class T>
void check_gemm(int64_t M, int64_t N, int64_t K) {
  std::vector<T> A(M * K), B(K * N), C0(M * N);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = static_cast<T>(normal_at(1, 1, i));
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = static_cast<T>(normal_at(1, 2, i));
  for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = static_cast<T>(normal_at(1, 3, i));
  for (bool column_major : {false, true}) {
    const int64_t ar = column_major ? 1 : K, ac = column_major ? M : 1;
    std::vector<T> want = C0;
    plain_gemm(M, N, K, A, ar, ac, B, want);
    for (const Kernels* k : available()) {
      std::vector<T> C = C0;
      if constexpr (sizeof(T) == 8)
        k->gemm_f64(M, N, K, A.data(), ar, ac, B.data(), N, C.data(), N);
      else
        k->gemm_f32(M, N, K, A.data(), ar, ac, B.data(), N, C.data(), N);
      // An empty C (N = 0) has null data(), which memcmp must not get (UBSan), even for 0 bytes.
      ASSERT_TRUE(C.empty() || std::memcmp(C.data(), want.data(), C.size() * sizeof(T)) == 0)
          << to_string(k->isa) << " " << M << "x" << N << "x" << K << (column_major ? " A^T" : "");
    }
  }
}

TEST(RefKernels, GemmIsThePlainLoopOnEveryInstructionSet) {
  for (auto [m, n, k] : {std::tuple{64, 16, 576}, {16, 512, 64}, {7, 37, 13}, {1, 1, 1}, {5, 70, 3},
                         {33, 16, 576}, {13, 8, 9}, {3, 0, 4}, {4, 8, 0}, {17, 40, 5}}) {
    check_gemm<double>(m, n, k);
    check_gemm<float>(m, n, k);
  }
  RecordProperty("isa", to_string(kernels().isa));
}

// The vector exp equals detmath's scalar one on every lane, including the lanes it hands back to
// the scalar path (outside the plain range, -inf, NaN).
TEST(RefKernels, ExpIsDetmathsOnEveryInstructionSet) {
  std::vector<double> x;
  for (int i = 0; i < 4000; ++i) x.push_back((random_unit(5, 1, i) - 0.9) * 100.0);
  for (int i = 0; i < 400; ++i) x.push_back((random_unit(5, 2, i) - 0.5) * 2300.0);
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {-inf, inf, std::numeric_limits<double>::quiet_NaN(), 0.0, -0.0, -707.0, -708.0, 708.0, 709.5, -745.0, -1021.0,
                   -1022.5, -1074.0, 1023.5})
    x.push_back(v);
  std::vector<float> xf(x.begin(), x.end());
  for (const Kernels* k : available())
    for (bool base2 : {false, true}) {
      std::vector<double> y(x.size());
      k->exp_f64(static_cast<int64_t>(x.size()), x.data(), y.data(), base2);
      std::vector<float> yf(xf.size());
      k->exp_f32(static_cast<int64_t>(xf.size()), xf.data(), yf.data(), base2);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = base2 ? detmath::exp2(x[i]) : detmath::exp(x[i]);
        ASSERT_EQ(std::memcmp(&y[i], &want, 8), 0) << to_string(k->isa) << " x = " << x[i];
        const float wantf = static_cast<float>(base2 ? detmath::exp2(xf[i]) : detmath::exp(xf[i]));
        ASSERT_EQ(std::memcmp(&yf[i], &wantf, 4), 0) << to_string(k->isa) << " xf = " << xf[i];
      }
    }
}

TEST(RefKernels, NormalsAreTheSameOnEveryInstructionSet) {
  for (const Kernels* k : available())
    for (uint64_t first : {0ull, 8ull, 0xFFFFFFFCull, 123456789ull}) {
      double out[16];
      k->normals_x8(42, 2, first, out);
      for (int j = 0; j < 16; ++j) {
        const double want = normal_at(42, 2, 2 * first + j);
        ASSERT_EQ(std::memcmp(&out[j], &want, 8), 0) << to_string(k->isa) << " block " << first;
      }
    }
}

}  // namespace
}  // namespace mlacheck::ref
