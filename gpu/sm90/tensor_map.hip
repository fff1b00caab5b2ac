// Host side of the bulk tensor copies: gpu/sm90/tensor_map.h.
#include "gpu/sm90/tensor_map.h"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

namespace mlacheck::gpu::sm90 {
namespace {

// The driver's encoder, looked up once. 12000: the ABI version of cuTensorMapEncodeTiled's
// signature (CUDA 12.0, cudaTypedefs.h PFN_cuTensorMapEncodeTiled_v12000).
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                           cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || f == nullptr)
      throw std::runtime_error("bulk tensor copies: the driver has no cuTensorMapEncodeTiled (" +
                               std::string(cudaGetErrorString(e)) + ")");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

}  // namespace

CUtensorMap bf16_row_tensor_map(const void* base, int64_t rows, int row_elems, int box_rows) {
  constexpr int kSwizzleElems = 64;  // 128 bytes of bf16: the 128-byte swizzle's span
  if (rows < 1 || row_elems < kSwizzleElems || row_elems % kSwizzleElems != 0 || box_rows < 1 ||
      box_rows > 256)
    throw std::invalid_argument("bf16_row_tensor_map: " + std::to_string(rows) + " rows of " +
                                std::to_string(row_elems) + " elements, boxes of " +
                                std::to_string(box_rows) + " rows");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(row_elems), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(row_elems) * 2};
  const cuuint32_t box[2] = {kSwizzleElems, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base),
                               dims, row_stride, box, element_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("bulk tensor copies: cuTensorMapEncodeTiled refused the map of " +
                             std::to_string(rows) + " rows (CUresult " + std::to_string(r) + ")");
  return map;
}

}  // namespace mlacheck::gpu::sm90
