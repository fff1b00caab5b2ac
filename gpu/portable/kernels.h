#pragma once
// Runtime builds only: the launch functions of the portable kernels (one .hip file each). Each
// queues its kernels on `stream` and checks the launch; none allocates or synchronizes.
#include <cstddef>
#include <cstdint>

#include "gpu/params.h"
#include "gpu/portable/args.h"

namespace mlacheck::gpu::portable {

// Quantizes Q as args.format says (nothing for bf16): the amax reduction and the encode kernel.
void launch_q_quant(const QuantArgs& args, StreamHandle stream);
// The attention kernel of kInstances[instance] over `blocks` = B x max(1, S) blocks.
void launch_attention(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                      StreamHandle stream);
// The LSE merge of `rows` query rows (T).
void launch_merge(const MergeArgs& args, int64_t rows, StreamHandle stream);
// The work list of a chunked split plan (one block; split_plan.hip).
void launch_split_plan(const PlanArgs& args, StreamHandle stream);

}  // namespace mlacheck::gpu::portable
