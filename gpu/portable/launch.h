#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the launcher of the portable strategies
// (gpu/family.h Launcher): the shared steps (gpu/common/decode_steps.h) around the portable
// attention kernel, one block per request and split, all 16 heads.
#include "gpu/params.h"
#include "gpu/registry.h"

namespace mlacheck::gpu::portable {

void launch(const Strategy& s, const DecodeParams& params, StreamHandle stream);

}  // namespace mlacheck::gpu::portable
