#include "ref/tensor_core_dot.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "problem/recipe.h"
#include "ref/fp8_mma.h"

namespace mlacheck::ref {

using problem::kTensorCoreRun;

void TensorCoreOperand::assign(const float* x, int64_t ld, int64_t n, int64_t cols, std::span<const int> order) {
  cols_ = cols;
  const int64_t runs = (n + kTensorCoreRun - 1) / kTensorCoreRun;
  const int64_t rows = order.empty() ? n : runs * kTensorCoreRun;
  values_.resize(static_cast<std::size_t>(rows * cols));
  const auto put = [&](int64_t to, const float* row) {
    float* dst = values_.data() + to * cols;
    if (row)
      std::copy(row, row + cols, dst);
    else
      std::fill(dst, dst + cols, 0.0f);
  };
  if (order.empty()) {
    for (int64_t i = 0; i < n; ++i) put(i, x + i * ld);
  } else {
    for (int64_t i0 = 0; i0 < n; i0 += kTensorCoreRun) {
      const int64_t len = std::min<int64_t>(kTensorCoreRun, n - i0);
      for (int p = 0; p < kTensorCoreRun; ++p) {
        const int at = order[static_cast<std::size_t>(p)];
        put(i0 + p, at < len ? x + (i0 + at) * ld : nullptr);
      }
    }
  }
  exponents_.resize(values_.size());
  e4m3_ = e4m3_factor_exponents(values_.data(), static_cast<int64_t>(values_.size()), exponents_.data());
}

void tensor_core_products(float* c, const TensorCoreOperand& a, int64_t i, const TensorCoreOperand& b,
                          bool promoted) {
  if (a.rows() != b.rows() || i < 0 || i >= a.cols())
    throw std::invalid_argument("tensor_core_products: " + std::to_string(a.rows()) + " and " +
                                std::to_string(b.rows()) + " rows, column " + std::to_string(i) + " of " +
                                std::to_string(a.cols()));
  const int64_t n = a.rows();
  const bool e4m3 = a.e4m3_ && b.e4m3_;
  for (int64_t j0 = 0; j0 < b.cols(); j0 += kFp8MmaLanes) {
    const int64_t lanes = std::min<int64_t>(kFp8MmaLanes, b.cols() - j0);
    float sum[kFp8MmaLanes], run[kFp8MmaLanes];
    std::copy(c + j0, c + j0 + lanes, sum);
    for (int64_t k0 = 0; k0 < n; k0 += kTensorCoreRun) {
      const int64_t width = std::min<int64_t>(kTensorCoreRun, n - k0);
      for (int64_t j = 0; j < lanes; ++j) run[j] = promoted ? 0.0f : sum[j];
      const int64_t at_a = k0 * a.cols() + i, at_b = k0 * b.cols() + j0;
      if (e4m3 && lanes == kFp8MmaLanes) {
        fp8_mma_accumulate_e4m3(run, a.values_.data() + at_a, a.exponents_.data() + at_a, a.cols(),
                                b.values_.data() + at_b, b.exponents_.data() + at_b, b.cols(), width);
      } else {  // the model's general form, one sum at a time
        float x[kTensorCoreRun], y[kTensorCoreRun];
        for (int64_t j = 0; j < lanes; ++j) {
          for (int64_t k = 0; k < width; ++k) {
            x[k] = a.values_[static_cast<std::size_t>(at_a + k * a.cols())];
            y[k] = b.values_[static_cast<std::size_t>(at_b + k * b.cols() + j)];
          }
          run[j] = fp8_mma_accumulate(run[j], x, y, width, kSm90Fp8Mma);
        }
      }
      for (int64_t j = 0; j < lanes; ++j) sum[j] = promoted ? sum[j] + run[j] : run[j];
    }
    std::copy(sum, sum + lanes, c + j0);
  }
}

}  // namespace mlacheck::ref
