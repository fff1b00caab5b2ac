#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): the steps of a decode every kernel family shares,
// around the family's own attention kernel.
#include <cstddef>
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/common/kernel_start.h"
#include "gpu/params.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu::common {

// The recipe-derived fields of QuantArgs (format, variant, rounding, fl32(1/M), static scale);
// the caller fills in the sizes and pointers.
QuantArgs quant_args_for(const problem::Recipe& r);

// Queues a family's attention kernel: `instance` indexes the family's own instance list. Returns
// true when the kernel merged the splits itself (wrote out and lse): no merge is queued then.
// `start` is with_previous when a kernel of the call precedes it (KernelStart).
using AttentionLauncher = bool (*)(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                                   StreamHandle stream, KernelStart start);

// Checks the params against the recipe (on the host, without touching device memory), carves the
// workspace, queues Q quantization, the work list of a chunked plan, the attention kernel (uniform
// plans: B x max(1, splits) blocks; chunked plans: persistent_blocks blocks taking the work items
// in turn) and, with split-K, the LSE merge, whose weights and merged LSE `merge_weights` picks (the
// family's choice). Throws std::invalid_argument for params that do not fit.
void queue_decode(const problem::Recipe& recipe, std::size_t instance, const problem::SplitPlan& plan,
                  int64_t persistent_blocks, const DecodeParams& params, StreamHandle stream,
                  AttentionLauncher attention, MergeWeights merge_weights);

}  // namespace mlacheck::gpu::common
