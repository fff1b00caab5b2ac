#pragma once
// Runtime builds only: the launch function of the portable attention kernel (attention.hip). It
// queues the kernel on `stream` and checks the launch; it neither allocates nor synchronizes.
#include <cstddef>
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/common/kernel_start.h"
#include "gpu/params.h"

namespace mlacheck::gpu::portable {

// The attention kernel of kInstances[instance] over `blocks` = B x max(1, S) blocks.
// Returns false: split-K partials are left for the merge kernel (common::AttentionLauncher).
// `start`: gpu/common/kernel_start.h (the kernel waits at its start).
bool launch_attention(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                      StreamHandle stream, common::KernelStart start);

}  // namespace mlacheck::gpu::portable
