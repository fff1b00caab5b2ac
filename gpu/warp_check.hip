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

// Prefix: group_inclusive_sum, else group_sum.
template <int Width, bool Prefix>
__global__ void __launch_bounds__(kThreadsPerBlock)
    group_sum_kernel(const uint32_t* values, uint32_t* sums) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // every lane active: the grid covers values exactly
  sums[i] = Prefix ? group_inclusive_sum<Width>(values[i]) : group_sum<Width>(values[i]);
}

template <int Width, bool Prefix>
void launch(const DeviceBuffer<uint32_t>& values, DeviceBuffer<uint32_t>& sums) {
  if constexpr (divides_warp(Width)) {
    const auto blocks = static_cast<unsigned>(values.size() / kThreadsPerBlock);
    group_sum_kernel<Width, Prefix><<<blocks, kThreadsPerBlock>>>(values.get(), sums.get());
    MLACHECK_GPU_CHECK(hipGetLastError());
    MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  } else {
    throw std::invalid_argument("group width " + std::to_string(Width) +
                                " does not divide the warp (" + std::to_string(kWarpSize) + ")");
  }
}

template <bool Prefix>
std::vector<uint32_t> device_sums(int width, const std::vector<uint32_t>& values) {
  if (values.size() % kThreadsPerBlock != 0)
    throw std::invalid_argument("device_group_sums: size must be a multiple of " +
                                std::to_string(kThreadsPerBlock));
  if (values.empty()) return {};
  const DeviceBuffer<uint32_t> in(values);
  DeviceBuffer<uint32_t> out(values.size());
  out.fill_bytes(0xA5);
  switch (width) {
    case 2: launch<2, Prefix>(in, out); break;
    case 4: launch<4, Prefix>(in, out); break;
    case 8: launch<8, Prefix>(in, out); break;
    case 16: launch<16, Prefix>(in, out); break;
    case 32: launch<32, Prefix>(in, out); break;
    case 64: launch<64, Prefix>(in, out); break;
    default:
      throw std::invalid_argument("group width " + std::to_string(width) +
                                  " is not one of 2, 4, ..., 64");
  }
  return out.download();
}

}  // namespace

std::vector<uint32_t> device_group_sums(int width, const std::vector<uint32_t>& values) {
  return device_sums<false>(width, values);
}

std::vector<uint32_t> device_group_prefix_sums(int width, const std::vector<uint32_t>& values) {
  return device_sums<true>(width, values);
}

}  // namespace mlacheck::gpu
