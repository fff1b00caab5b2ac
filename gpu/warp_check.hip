#include "gpu/warp_check.h"

#include <stdexcept>
#include <string>

#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "gpu/warp.h"

namespace mlacheck::gpu {

namespace {

constexpr int kThreadsPerBlock = 256;
static_assert(kThreadsPerBlock % kWarpSize == 0);

template <int Width>
__global__ void __launch_bounds__(kThreadsPerBlock)
    group_sum_kernel(const uint32_t* values, uint32_t* sums) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  sums[i] = group_sum<Width>(values[i]);  // every lane active: the grid covers values exactly
}

template <int Width>
void launch(const DeviceBuffer<uint32_t>& values, DeviceBuffer<uint32_t>& sums) {
  if constexpr (divides_warp(Width)) {
    const auto blocks = static_cast<unsigned>(values.size() / kThreadsPerBlock);
    group_sum_kernel<Width><<<blocks, kThreadsPerBlock>>>(values.get(), sums.get());
    MLACHECK_GPU_CHECK(hipGetLastError());
    MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  } else {
    throw std::invalid_argument("group width " + std::to_string(Width) +
                                " does not divide the warp (" + std::to_string(kWarpSize) + ")");
  }
}

}  // namespace

std::vector<uint32_t> device_group_sums(int width, const std::vector<uint32_t>& values) {
  if (values.size() % kThreadsPerBlock != 0)
    throw std::invalid_argument("device_group_sums: size must be a multiple of " +
                                std::to_string(kThreadsPerBlock));
  if (values.empty()) return {};
  const DeviceBuffer<uint32_t> in(values);
  DeviceBuffer<uint32_t> out(values.size());
  out.fill_bytes(0xA5);
  switch (width) {
    case 2: launch<2>(in, out); break;
    case 4: launch<4>(in, out); break;
    case 8: launch<8>(in, out); break;
    case 16: launch<16>(in, out); break;
    case 32: launch<32>(in, out); break;
    case 64: launch<64>(in, out); break;
    default:
      throw std::invalid_argument("group width " + std::to_string(width) +
                                  " is not one of 2, 4, ..., 64");
  }
  return out.download();
}

}  // namespace mlacheck::gpu
