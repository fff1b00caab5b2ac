#include "gpu/q_quant_check.h"

#include <cstring>
#include <stdexcept>

#include "gpu/common/args.h"
#include "gpu/common/config.h"
#include "gpu/common/decode_steps.h"
#include "gpu/common/kernels.h"
#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "gpu/workspace.h"
#include "problem/shape.h"

namespace mlacheck::gpu {

DeviceQuantizedQ quantize_q_on_device(const problem::Recipe& r, std::span<const uint16_t> q_bf16,
                                      std::size_t q_offset) {
  constexpr std::size_t kRow = static_cast<std::size_t>(problem::kNumHeads) * problem::kQkDim;
  if (r.q == problem::QFormat::bf16 || q_bf16.size() % kRow != 0)
    throw std::invalid_argument("quantize_q_on_device: a quantized Q format and whole rows");
  const auto tokens = static_cast<int64_t>(q_bf16.size() / kRow);
  const WorkspaceLayout w = workspace_layout(r, problem::SplitPlan{}, tokens, 0, 0);
  std::vector<uint16_t> placed(q_offset, 0);
  placed.insert(placed.end(), q_bf16.begin(), q_bf16.end());
  const DeviceBuffer<uint16_t> q(placed);
  DeviceBuffer<unsigned char> ws(w.bytes);
  ws.fill_bytes(0xA5);  // not a valid answer for any region

  common::QuantArgs a = common::quant_args_for(r);
  a.elements = static_cast<int64_t>(q_bf16.size());
  a.q = q.get() + q_offset;
  const auto region = [&](std::size_t offset) {
    return offset == WorkspaceLayout::kAbsent ? nullptr : ws.get() + offset;
  };
  a.amax = reinterpret_cast<uint32_t*>(region(w.amax));
  a.scale = reinterpret_cast<float*>(region(w.q_scale));
  a.codes = region(w.q_codes);
  a.block_scales = region(w.q_block_scales);
  common::launch_q_quant(a, nullptr);
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());

  const std::vector<unsigned char> all = ws.download();
  DeviceQuantizedQ out;
  const bool mx = r.q == problem::QFormat::mxfp4_dynamic;
  const std::size_t n_codes = mx ? q_bf16.size() / 2 : q_bf16.size();
  out.codes.assign(all.begin() + static_cast<std::ptrdiff_t>(w.q_codes),
                   all.begin() + static_cast<std::ptrdiff_t>(w.q_codes + n_codes));
  if (mx) {
    const std::size_t n = q_bf16.size() / problem::kMxfp4Block;
    out.block_scales.assign(all.begin() + static_cast<std::ptrdiff_t>(w.q_block_scales),
                            all.begin() + static_cast<std::ptrdiff_t>(w.q_block_scales + n));
  }
  if (w.q_scale != WorkspaceLayout::kAbsent)
    std::memcpy(&out.scale, all.data() + w.q_scale, sizeof(float));
  return out;
}

}  // namespace mlacheck::gpu
