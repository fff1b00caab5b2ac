#pragma once
// Runtime builds for NVIDIA sm_90a only: the launch function of the Hopper attention kernel
// (attention.hip). It queues one kernel on `stream` and checks the launch; it neither allocates nor
// synchronizes.
#include <cstddef>
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/params.h"

namespace mlacheck::gpu::hopper {

// The kernel of hopper::kInstances[instance] over `blocks` = B x max(1, S) blocks (uniform plans);
// args.softmax_tile must be kTileKeys.
void launch_attention(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                      StreamHandle stream);

}  // namespace mlacheck::gpu::hopper
