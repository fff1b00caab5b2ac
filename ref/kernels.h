#pragma once
// The reference's hot loops, one table per instruction set (ref/isa.h). Every entry gives the same
// bits whichever table runs it.
#include <cstdint>

#include "ref/isa.h"

namespace mlacheck::ref {

struct Kernels {
  Isa isa;

  // The 16 normals of Philox blocks first .. first+7 of (seed, stream), in element order
  // (ref/random.h): out[2j], out[2j+1] = the pair of block first + j.
  void (*normals_x8)(uint64_t seed, uint32_t stream, uint64_t first, double* out);

  // C[m][n] += sum over k of A(m, k) * B[k][n] for an M x N block of C: every C element is
  // summed in the order k = 0, 1, ..., K-1, starting from its value in C, with one rounding per
  // product and one per addition — the plain triple loop's result. The vectors run over n only.
  // A(m, k) = A[m * a_row + k * a_col] (either layout of A); B and C are row-major with leading
  // dimensions ldb, ldc (elements).
  // We block the products ourselves rather than call Eigen: Eigen's GEMM picks its blocking from
  // the CPU's cache sizes at run time (and uses FMA when built for it), which changes the
  // summation order between machines.
  void (*gemm_f64)(int64_t M, int64_t N, int64_t K, const double* A, int64_t a_row, int64_t a_col,
                   const double* B, int64_t ldb, double* C, int64_t ldc);
  void (*gemm_f32)(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_row, int64_t a_col,
                   const float* B, int64_t ldb, float* C, int64_t ldc);

  // y[i] = detmath::exp(x[i]) (base e) or detmath::exp2(x[i]) (base 2), bit for bit; x == y is
  // allowed. The f32 form is fl32(detmath::exp((double)x)), the emulated mode's float32 e^x.
  void (*exp_f64)(int64_t n, const double* x, double* y, bool base2);
  void (*exp_f32)(int64_t n, const float* x, float* y, bool base2);
};

// The table for the widest instruction set this CPU runs (chosen once).
const Kernels& kernels();
// The table of `isa`, or nullptr when this CPU cannot run it (tests compare the tables).
const Kernels* kernels_for(Isa isa);

// One per instruction-set translation unit (ref/kernels_*.cpp).
const Kernels& kernels_baseline();
const Kernels& kernels_avx2();
const Kernels& kernels_avx512();

}  // namespace mlacheck::ref
