#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the codec cases of gpu/codec_cases.h run on
// GPU 0. The test compares the result with host_outputs() bit for bit.
#include <cstdint>
#include <vector>

#include "gpu/codec_ops.h"

namespace mlacheck::gpu {

// apply_codec(op, x) for every input, computed by device code. Throws gpu::Error.
std::vector<uint32_t> device_outputs(const CodecOp& op, const std::vector<uint32_t>& inputs);

}  // namespace mlacheck::gpu
