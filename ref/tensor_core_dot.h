#pragma once
// The emulation's products of fp8 codes as the tensor core sums them (Recipe::fp8_acc tc64 / tc,
// ref/fp8_mma.h's kSm90Fp8Mma), on operands laid out once for the many sums that reuse them: Q by
// every key, a K row by 16 heads, P by 512 V columns, V by 16 heads.
#include <cstdint>
#include <span>
#include <vector>

namespace mlacheck::ref {

// One operand: `cols` values a row, the rows (the sums' K dimension) in the order the kernel feeds
// a run's products to the tensor core, with the values' alignment exponents
// (fp8_mma.h's e4m3_factor_exponents).
class TensorCoreOperand {
 public:
  // Rows x + i * ld, i < n, of `cols` values. With an order (EmulationOptions::tc_qk_order /
  // tc_pv_order, a permutation of a run's positions; empty: in order) position p of run r holds row
  // 64 r + order[p], and a short last run is padded to 64 rows of zeros (the kernel's masked keys).
  void assign(const float* x, int64_t ld, int64_t n, int64_t cols, std::span<const int> order);
  int64_t rows() const { return cols_ == 0 ? 0 : static_cast<int64_t>(values_.size()) / cols_; }
  int64_t cols() const { return cols_; }

 private:
  friend void tensor_core_products(float*, const TensorCoreOperand&, int64_t, const TensorCoreOperand&, bool);
  std::vector<float> values_;       // [rows][cols]
  std::vector<int32_t> exponents_;  // [rows][cols]
  int64_t cols_ = 0;
  bool e4m3_ = true;  // every value a finite e4m3fn one (else only the model's general form applies)
};

// c[j] += Σ_k a(k, i)·b(k, j) for every column j of b, over the operands' rows, as the tensor core
// sums them in runs of problem::kTensorCoreRun: tc64 (promoted) adds each run's fresh accumulator to
// c[j] in float32; tc carries c[j] through every run as the accumulator.
void tensor_core_products(float* c, const TensorCoreOperand& a, int64_t i, const TensorCoreOperand& b,
                          bool promoted);

}  // namespace mlacheck::ref
