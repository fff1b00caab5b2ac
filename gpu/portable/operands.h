#pragma once
// Device helpers shared by the attention kernels (gpu/portable/, gpu/fast/): where a key's cache
// row is, and the operand values of Q and KV as Q·Kᵀ takes them. Every value is exactly a bf16
// value (bf16, fp8, E2M1·2^e), so a pair packs into one 32-bit word without rounding.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/portable/args.h"
#include "gpu/portable/device_common.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu::portable {

// The value of an MXFP4 element, exact in float32 (NUMERICS §5.7).
__device__ __forceinline__ float mxfp4_value(uint8_t code, uint8_t scale) {
  return quant::detail::mul_amd_nan(quant::e2m1_to_f32(code), quant::e8m0_to_f32(scale));
}
__device__ __forceinline__ uint32_t pair_of(float even, float odd) {
  return pack_bf16(quant::f32_to_bf16(even), quant::f32_to_bf16(odd));  // exact: see the top
}
// Elements 2j, 2j+1 of an MXFP4 row: codes byte j, its block's scale.
__device__ __forceinline__ uint32_t mxfp4_pair(uint8_t codes, uint8_t scale) {
  return pair_of(mxfp4_value(codes & 0x0F, scale), mxfp4_value(codes >> 4, scale));
}

// Elements 2j, 2j+1 of Q row `row` (= token * 16 + head) as the recipe feeds them to Q·Kᵀ.
__device__ __forceinline__ uint32_t q_pair(const AttentionArgs& a, int64_t row, int j) {
  switch (a.q_format) {
    case problem::QFormat::bf16:
      return reinterpret_cast<const uint32_t*>(a.q_bf16 + row * problem::kQkDim)[j];
    case problem::QFormat::mxfp4_dynamic:
      return mxfp4_pair(a.q_mxfp4[row * problem::kMxfp4RowBytes + j],
                        a.q_mxfp4_scale[row * problem::kMxfp4RowScales + j / 16]);
    default: {  // fp8 codes; the per-tensor scale multiplies the score, not the element
      const uint8_t* c = a.q_fp8 + row * problem::kQkDim + 2 * j;
      return pair_of(quant::fp8_to_f32(c[0], a.fp8), quant::fp8_to_f32(c[1], a.fp8));
    }
  }
}

// Cache row of key t of request b (problem/batch.h's kv_row).
__device__ __forceinline__ int64_t kv_row(const AttentionArgs& a, int64_t b, int64_t t) {
  if (a.kv_indices == nullptr) return a.kv_indptr[b] + t;
  const int64_t page = a.kv_indices[a.page_indptr[b] + t / a.page_size];
  if (MLACHECK_MUTANT(a, page_number_as_row)) return page + t % a.page_size;  // gpu/mutants.h
  return page * a.page_size + t % a.page_size;
}

}  // namespace mlacheck::gpu::portable
