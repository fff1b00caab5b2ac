#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the portable strategies' Q quantization run on
// its own, for the test that compares it with quant/bulk.h bit for bit.
#include <cstdint>
#include <span>
#include <vector>

#include "problem/recipe.h"

namespace mlacheck::gpu {

struct DeviceQuantizedQ {
  std::vector<uint8_t> codes;         // fp8 codes [n], or E2M1 pairs [n / 2]
  std::vector<uint8_t> block_scales;  // E8M0 [n / 32] (mxfp4)
  float scale = 0;                    // the per-tensor scale (scaled fp8 formats), else unused
};

// q: bf16 bits, a whole number of [16, 576] rows. recipe.q must not be bf16. Throws gpu::Error.
// q_offset: Q placed that many elements past the start of its device buffer (an odd offset
// misaligns it for the vector loads, so that the element-wise path runs).
DeviceQuantizedQ quantize_q_on_device(const problem::Recipe& recipe,
                                      std::span<const uint16_t> q_bf16, std::size_t q_offset = 0);

}  // namespace mlacheck::gpu
