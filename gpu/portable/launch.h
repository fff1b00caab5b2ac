#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the launcher of the portable strategies
// (gpu/registry.h, Launcher): Q quantization when the recipe quantizes Q, the attention kernel
// (one block per request and split, all 16 heads), and for split-K the LSE-merge kernel.
#include "gpu/params.h"
#include "gpu/registry.h"
#include "problem/recipe.h"

namespace mlacheck::gpu::portable {

void launch(const problem::Recipe& recipe, Schedule schedule, const Tunables& tunables,
            const DecodeParams& params, StreamHandle stream);

}  // namespace mlacheck::gpu::portable
