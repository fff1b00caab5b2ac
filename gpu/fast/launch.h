#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the launcher of the mma strategies
// (gpu/family.h Launcher): the shared steps (gpu/common/decode_steps.h) around the fast attention
// kernel (gpu/fast/attention.hip), with the family's split plan for the device's SM count.
#include "gpu/params.h"
#include "gpu/registry.h"

namespace mlacheck::gpu::fast {

void launch(const Strategy& s, const DecodeParams& params, StreamHandle stream);

}  // namespace mlacheck::gpu::fast
