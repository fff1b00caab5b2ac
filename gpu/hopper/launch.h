#pragma once
// Runtime builds for NVIDIA only: the launcher of the Hopper strategies (gpu/family.h Launcher): the
// shared steps (gpu/common/decode_steps.h) around the Hopper attention kernel.
#include "gpu/params.h"
#include "gpu/registry.h"

namespace mlacheck::gpu::hopper {

void launch(const Strategy& s, const DecodeParams& params, StreamHandle stream);

}  // namespace mlacheck::gpu::hopper
