#pragma once
// Device helpers shared by the attention kernels (gpu/portable/, gpu/fast/): where a key's cache
// row is, and the operand values of Q as Q·Kᵀ takes them (decoded by gpu/common/operand_decode.h).
// Every value is exactly a bf16 value (bf16, fp8, E2M1·2^e), so a pair packs into one 32-bit word
// without rounding.
#include <cstdint>

#include "gpu/platform.h"
#include "gpu/common/args.h"
#include "gpu/common/device_common.h"
#include "gpu/common/operand_decode.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::common {

// Two float32 values that are bf16 values as a bf16 pair (exact: see the top).
__device__ __forceinline__ uint32_t pair_of(float even, float odd) {
  return pack_bf16(quant::f32_to_bf16(even), quant::f32_to_bf16(odd));
}

// Elements 2j, 2j+1 of Q row `row` (= token * 16 + head) as the recipe feeds them to Q·Kᵀ.
__device__ __forceinline__ uint32_t q_pair(const AttentionArgs& a, int64_t row, int j) {
  switch (a.q_format) {
    case problem::QFormat::bf16:
      return reinterpret_cast<const uint32_t*>(a.q_bf16 + row * problem::kQkDim)[j];
    case problem::QFormat::mxfp4_dynamic:
      return mxfp4_pair_to_bf16_pair(a.q_mxfp4[row * problem::kMxfp4RowBytes + j],
                                     a.q_mxfp4_scale[row * problem::kMxfp4RowScales + j / 16]);
    default: {  // fp8 codes; the per-tensor scale multiplies the score, not the element
      const uint8_t* c = a.q_fp8 + row * problem::kQkDim + 2 * j;
      return fp8_pair_to_bf16_pair(c[0], c[1], a.fp8);
    }
  }
}

// kv_row of a paged cache in two steps, for a producer that loads a tile's page table entries a
// tile ahead of their use: the entry of key t of the request whose pages start at page_base
// (page_indptr[b]), then the row of key t in that page. A key position is below 2^31 (kv_indptr is
// int32), so the divisions are 32-bit ones.
__device__ __forceinline__ int32_t page_of(const AttentionArgs& a, int64_t page_base, int64_t t) {
  return a.kv_indices[page_base + static_cast<uint32_t>(t) / static_cast<uint32_t>(a.page_size)];
}
// The cache row `within` rows into page `page`.
__device__ __forceinline__ int64_t page_row(const AttentionArgs& a, int64_t page, int64_t within) {
  if (MLACHECK_MUTANT(a, page_number_as_row)) return page + within;  // gpu/mutants.h
  return page * a.page_size + within;
}
__device__ __forceinline__ int64_t row_in_page(const AttentionArgs& a, int64_t page, int64_t t) {
  return page_row(a, page, static_cast<uint32_t>(t) % static_cast<uint32_t>(a.page_size));
}

// Cache row of key t of request b (problem/batch.h's kv_row).
__device__ __forceinline__ int64_t kv_row(const AttentionArgs& a, int64_t b, int64_t t) {
  if (a.kv_indices == nullptr) return a.kv_indptr[b] + t;
  return row_in_page(a, page_of(a, a.page_indptr[b], t), t);
}

}  // namespace mlacheck::gpu::common
