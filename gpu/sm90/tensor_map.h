#pragma once
// Host side of the bulk tensor copies (gpu/sm90/tma.h): the tensor map of a cache of rows of bf16
// values, encoded by the driver's cuTensorMapEncodeTiled (reached through the runtime's
// cudaGetDriverEntryPointByVersion, so nothing links libcuda). NVIDIA sm_90a builds only.
#include <cstdint>

#include <cuda.h>

namespace mlacheck::gpu::sm90 {

// Boxes of `box_rows` rows x 64 bf16 (128 bytes, one 128-byte swizzle span) of a row-major tensor of
// `rows` rows x `row_elems` bf16 at `base` (16-byte aligned; row_elems a multiple of 64). A box
// lands as box_rows x 128 bytes with the 16-byte chunks of row r at chunk ^ (r % 8): the layout
// wgmma reads with a 128-byte-swizzle descriptor (gpu/sm90/wgmma.h Swizzle128Tile); a box may
// reach past the last row (a tensor shorter than a box too): those rows land as zeros. Throws
// std::runtime_error naming the driver's result when the driver refuses the map.
CUtensorMap bf16_row_tensor_map(const void* base, int64_t rows, int row_elems, int box_rows);

// Boxes of `box_bytes` bytes (a multiple of 16, at most 256) of a 1-D array of `bytes` bytes at
// `base` (16-byte aligned; fewer than 2^31 bytes, the box coordinate being 32 bits): a box must start
// at a multiple of 16 bytes (elsewhere the copy was an illegal instruction on the H200), and its
// bytes past the array's end land as zeros. No swizzle. Throws like bf16_row_tensor_map.
CUtensorMap byte_tensor_map_1d(const void* base, int64_t bytes, int box_bytes);

}  // namespace mlacheck::gpu::sm90
