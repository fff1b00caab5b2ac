// Host side of the bulk tensor copies: gpu/sm90/tensor_map.h.
#include "gpu/sm90/tensor_map.h"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

namespace mlacheck::gpu::sm90 {
namespace {

// The driver's encoder, looked up once, at the ABI version of cuTensorMapEncodeTiled's signature
// (CUDA 12.0: cudaTypedefs.h names that signature's pointer type after it, and has no alias).
constexpr unsigned kEncoderAbi = 12000;
using Encoder = PFN_cuTensorMapEncodeTiled_v12000;

Encoder encoder() {
  static const Encoder fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, kEncoderAbi,
                                                           cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || f == nullptr)
      throw std::runtime_error("bulk tensor copies: the driver has no cuTensorMapEncodeTiled (" +
                               std::string(cudaGetErrorString(e)) + ")");
    return reinterpret_cast<Encoder>(f);
  }();
  return fn;
}

}  // namespace

CUtensorMap bf16_row_tensor_map(const void* base, int64_t rows, int row_elems, int box_rows) {
  constexpr int kSwizzleElems = 64;  // 128 bytes of bf16: the 128-byte swizzle's span
  constexpr int kMaxBoxRows = 256;   // the driver's limit on each box dimension (cuTensorMapEncodeTiled)
  if (rows < 1 || row_elems < kSwizzleElems || row_elems % kSwizzleElems != 0 || box_rows < 1 ||
      box_rows > kMaxBoxRows)
    throw std::invalid_argument("bf16_row_tensor_map: " + std::to_string(rows) + " rows of " +
                                std::to_string(row_elems) + " elements, boxes of " +
                                std::to_string(box_rows) + " rows");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(row_elems), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(row_elems) * sizeof(uint16_t)};
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

CUtensorMap byte_tensor_map_1d(const void* base, int64_t bytes, int box_bytes) {
  constexpr int kMaxBox = 256;  // the driver's limit on each box dimension
  if (bytes < 1 || bytes >= (int64_t{1} << 31) || box_bytes < 16 || box_bytes > kMaxBox || box_bytes % 16 != 0)
    throw std::invalid_argument("byte_tensor_map_1d: " + std::to_string(bytes) + " bytes, boxes of " +
                                std::to_string(box_bytes));
  CUtensorMap map{};
  const cuuint64_t dims[1] = {static_cast<cuuint64_t>(bytes)};
  const cuuint64_t no_strides[1] = {0};  // rank 1: no stride beyond the innermost dimension's
  const cuuint32_t box[1] = {static_cast<cuuint32_t>(box_bytes)};
  const cuuint32_t element_strides[1] = {1};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, const_cast<void*>(base), dims,
                               no_strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("bulk tensor copies: cuTensorMapEncodeTiled refused the 1-D map of " +
                             std::to_string(bytes) + " bytes (CUresult " + std::to_string(r) + ")");
  return map;
}

}  // namespace mlacheck::gpu::sm90
