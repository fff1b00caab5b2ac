#pragma once
// Runtime builds for NVIDIA only (the bulk copy is sm_90's copy engine; gpu/mma/mma.h kHasBulkCopy):
// the device side of tests/gpu/bulk_copy_test.cpp.
#include <cstdint>
#include <vector>

namespace mlacheck::gpu {

// `rows` rows of `row_bytes` bytes (a multiple of 16) of `src` (rows * row_bytes bytes) copied by
// bulk_copy into poisoned shared memory in two phases of one barrier (the rows of order[0 ..
// rows/2) first, then the rest, each copy to the shared slot of its row), every row read back by
// threads other than the one that issued it after bulk_barrier_wait: returns the shared bytes, in
// row order. `order` is a permutation of 0 .. rows-1 (copies issued out of row order).
// Static shared memory is limited to 48 KB per block; the barrier word sits beside the rows.
inline constexpr int kBulkCopyMaxBytes = 40 * 1024;
std::vector<uint8_t> device_bulk_copy(const std::vector<uint8_t>& src, int row_bytes,
                                      const std::vector<int>& order);

}  // namespace mlacheck::gpu
