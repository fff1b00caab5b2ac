#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the launcher of the fast strategies
// (gpu/registry.h, Launcher). The steps around the kernel are the portable family's
// (portable::launch_with: Q quantization, workspace, LSE merge in a second launch); the attention
// kernel is gpu/fast/attention.hip, with the split count of split_rule.h.
#include "gpu/params.h"
#include "gpu/registry.h"
#include "problem/recipe.h"

namespace mlacheck::gpu::fast {

void launch(const problem::Recipe& recipe, Schedule schedule, const Tunables& tunables,
            const DecodeParams& params, StreamHandle stream);

}  // namespace mlacheck::gpu::fast
