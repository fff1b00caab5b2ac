// NVIDIA only (gpu/CMakeLists.txt: NVIDIA_SOURCES): the bulk copy of the tile layer on the device,
// for tests/gpu/bulk_copy_test.cpp. One block: thread 0 initialises the barrier and, per phase,
// announces the phase's bytes and issues one bulk copy per row; every thread waits on the phase and
// then reads rows that other threads' warps did not issue.
#include "gpu/mma/bulk_copy_check.h"

#include <stdexcept>
#include <string>

#include "gpu/common/device_common.h"
#include "gpu/device_buffer.h"
#include "gpu/mma/mma.h"
#include "gpu/platform.h"

namespace mlacheck::gpu {
namespace {

constexpr int kThreads = 128;
constexpr uint8_t kPoison = 0xA5;

__global__ void __launch_bounds__(kThreads)
    bulk_copy_kernel(const uint8_t* src, int rows, int row_bytes, const int* order, uint8_t* out) {
  __shared__ alignas(16) uint8_t s[kBulkCopyMaxBytes];
  __shared__ alignas(8) mma::BulkBarrier bar;
  const int t = static_cast<int>(threadIdx.x);
  const int bytes = rows * row_bytes;
  for (int i = t; i < bytes; i += kThreads) s[i] = kPoison;
  if (t == 0) mma::bulk_barrier_init(&bar, 1);
  common::block_sync();
  const int halves[3] = {0, rows / 2, rows};
  for (int phase = 0; phase < 2; ++phase) {
    if (t == 0) {
      const int n = halves[phase + 1] - halves[phase];
      mma::bulk_barrier_expect(&bar, static_cast<uint32_t>(n * row_bytes));
      for (int i = halves[phase]; i < halves[phase + 1]; ++i) {
        const int r = order[i];
        mma::bulk_copy(s + r * row_bytes, src + static_cast<int64_t>(r) * row_bytes,
                       static_cast<uint32_t>(row_bytes), &bar);
      }
    }
    mma::bulk_barrier_wait(&bar, static_cast<uint32_t>(phase));
    // Read this phase's rows, the last warp's threads first (not the issuing thread's warp).
    for (int i = halves[phase]; i < halves[phase + 1]; ++i) {
      const int r = order[i];
      for (int b = (t + kThreads - kWarpSize) % kThreads; b < row_bytes; b += kThreads)
        out[r * row_bytes + b] = s[r * row_bytes + b];
    }
  }
}

}  // namespace

std::vector<uint8_t> device_bulk_copy(const std::vector<uint8_t>& src, int row_bytes,
                                      const std::vector<int>& order) {
  const int rows = static_cast<int>(order.size());
  if (row_bytes <= 0 || row_bytes % 16 != 0 || rows < 2 ||
      src.size() != static_cast<std::size_t>(rows) * row_bytes ||
      src.size() > static_cast<std::size_t>(kBulkCopyMaxBytes))
    throw std::invalid_argument("bulk copy check: " + std::to_string(rows) + " rows of " +
                                std::to_string(row_bytes) + " bytes (a multiple of 16, at least 2 "
                                "rows, at most " + std::to_string(kBulkCopyMaxBytes) + " bytes)");
  const DeviceBuffer<uint8_t> d_src(src);
  const DeviceBuffer<int> d_order(order);
  DeviceBuffer<uint8_t> d_out(src.size());
  d_out.fill_bytes(0xFF);
  bulk_copy_kernel<<<1, kThreads>>>(d_src.get(), rows, row_bytes, d_order.get(), d_out.get());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return d_out.download();
}

}  // namespace mlacheck::gpu
