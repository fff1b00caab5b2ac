#include "gpu/codec_check.h"

#include <algorithm>

#include "gpu/device_buffer.h"
#include "gpu/platform.h"

namespace mlacheck::gpu {

namespace {

// A multiple of every warp width; the kernel is a plain element-wise map, nothing to tune.
constexpr int kThreadsPerBlock = 256;
static_assert(kThreadsPerBlock % kWarpSize == 0);
// Enough blocks to fill an H200 or an MI300X several times; the grid-stride loop covers the rest.
constexpr std::size_t kMaxBlocks = 4096;

// Outputs are poisoned with this byte: 0xA5A5A5A5 is no output of any codec case (not an FP8, E2M1
// or E8M0 code, not a bf16 pattern, not a decoded small-format value, not an exponent in ±127).
constexpr unsigned char kPoison = 0xA5;

__global__ void __launch_bounds__(kThreadsPerBlock)
    codec_kernel(CodecOp op, const uint32_t* inputs, uint32_t* outputs, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    outputs[i] = apply_codec(op, inputs[i]);
}

}  // namespace

std::vector<uint32_t> device_outputs(const CodecOp& op, const std::vector<uint32_t>& inputs) {
  if (inputs.empty()) return {};
  const DeviceBuffer<uint32_t> in(inputs);
  DeviceBuffer<uint32_t> out(inputs.size());
  out.fill_bytes(kPoison);
  const std::size_t blocks =
      std::min(kMaxBlocks, (inputs.size() + kThreadsPerBlock - 1) / kThreadsPerBlock);
  codec_kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock>>>(op, in.get(), out.get(),
                                                                     inputs.size());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return out.download();
}

}  // namespace mlacheck::gpu
