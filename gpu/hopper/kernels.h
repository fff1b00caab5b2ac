#pragma once
// Runtime builds for NVIDIA sm_90a only: the launch function of the Hopper attention kernel
// (attention.hip). It queues one kernel on `stream` and checks the launch; it neither allocates nor
// synchronizes.
#include <cstddef>
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/common/kernel_start.h"
#include "gpu/params.h"

namespace mlacheck::gpu::hopper {

// The kernel of hopper::kInstances[instance] over `blocks` = B x max(1, S) blocks (uniform plans)
// or persistent blocks (chunked plans); args.softmax_tile must be kTileKeys. Returns false: the
// split-K partials are left for the merge kernel (common::AttentionLauncher).
bool launch_attention(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                      StreamHandle stream, common::KernelStart start);
// Split-K with the merge in the kernel: the args.num_splits blocks of each request form a cluster
// and merge their partials there, writing args.out and args.lse (gpu/sm90/cluster_merge.h); no
// partial reaches the workspace. Only where cluster_merge_fits(instance, args.num_splits). Returns
// true: nothing is left to merge.
bool launch_attention_fused(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                            StreamHandle stream, common::KernelStart start);
// The same with the bf16 kernel that takes kMaxPack (gpu/hopper/config.h) query tokens of a request
// at a time, each tile copied once for them (bf16 instances only).
bool launch_attention_packed(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                             StreamHandle stream, common::KernelStart start);
bool launch_attention_fused_packed(std::size_t instance, const common::AttentionArgs& args, int64_t blocks,
                                   StreamHandle stream, common::KernelStart start);
// How many clusters of the fused kernel for this instance and split count run at once on the
// current device (the runtime's cudaOccupancyMaxActiveClusters); 0 where it does not run: splits
// outside 2..8 (the portable cluster size), or clusters of that size that do not fit.
int cluster_merge_capacity(std::size_t instance, int splits);

}  // namespace mlacheck::gpu::hopper
