#pragma once
// Runtime builds only: the launch function of the portable attention kernel (attention.hip). It
// queues the kernel on `stream` and checks the launch; it neither allocates nor synchronizes.
#include <cstddef>
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/params.h"

namespace mlacheck::gpu::portable {

// The attention kernel of kInstances[instance] over `blocks` = B x max(1, S) blocks.
// Returns false: split-K partials are left for the merge kernel (common::AttentionLauncher).
bool launch_attention(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                      StreamHandle stream);

}  // namespace mlacheck::gpu::portable
