#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): gpu/warp.h's group_sum on GPU 0, so that the
// shuffle wrappers are checked on each platform's real warp width.
#include <cstdint>
#include <vector>

namespace mlacheck::gpu {

// For each value, the (mod 2^32) sum over its group of `width` consecutive elements, computed by
// group_sum<width> on the device. width must divide kWarpSize (else std::invalid_argument);
// values.size() must be a multiple of 256. Throws gpu::Error on runtime failures.
std::vector<uint32_t> device_group_sums(int width, const std::vector<uint32_t>& values);
// The same for group_inclusive_sum<width>: each value's (mod 2^32) sum over the lanes of its group
// up to and including its own.
std::vector<uint32_t> device_group_prefix_sums(int width, const std::vector<uint32_t>& values);

}  // namespace mlacheck::gpu
