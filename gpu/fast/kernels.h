#pragma once
// Runtime builds only: the launch function of the fast attention kernel (attention.hip). It queues
// one kernel on `stream` and checks the launch; it neither allocates nor synchronizes.
#include <cstddef>
#include <cstdint>

#include "gpu/params.h"
#include "gpu/common/args.h"
#include "gpu/common/kernel_start.h"

namespace mlacheck::gpu::fast {

// The kernel of fast::kInstances[instance] (gpu/fast/instances.h) over `blocks` = B x max(1, S)
// blocks; args.softmax_tile must be kTileKeys.
// Returns false: split-K partials are left for the merge kernel (common::AttentionLauncher).
// `start`: gpu/common/kernel_start.h (the kernel waits at its start).
bool launch_attention(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                      StreamHandle stream, common::KernelStart start);

}  // namespace mlacheck::gpu::fast
