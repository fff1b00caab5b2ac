#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the launcher of the portable strategies
// (gpu/registry.h, Launcher): Q quantization when the recipe quantizes Q, the attention kernel
// (one block per request and split, all 16 heads), and for split-K the LSE-merge kernel; and
// the part of it other kernel families share (launch_with).
#include <cstddef>
#include <cstdint>

#include "gpu/params.h"
#include "gpu/portable/args.h"
#include "gpu/registry.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu::portable {

void launch(const problem::Recipe& recipe, Schedule schedule, const Tunables& tunables,
            const DecodeParams& params, StreamHandle stream);

// The steps every attention kernel family shares, with `attention` queuing the family's kernel
// (gpu/portable/kernels.h launch_attention's signature): checks the params against the recipe (on
// the host, without touching device memory), carves the workspace, queues Q quantization, the
// work list of a chunked plan, the attention kernel (uniform plans: B x max(1, splits) blocks;
// chunked plans: persistent_blocks blocks taking the work items in turn) and, with split-K, the
// LSE merge.
using AttentionLauncher = void (*)(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                                   StreamHandle stream);
void launch_with(const problem::Recipe& recipe, const problem::SplitPlan& plan,
                 int64_t persistent_blocks, const DecodeParams& params, StreamHandle stream,
                 AttentionLauncher attention);

}  // namespace mlacheck::gpu::portable
