#pragma once
// Runtime builds only: the launch functions of the kernels every family shares (one .hip file
// each). Each queues its kernels on `stream` and checks the launch; none allocates or synchronizes.
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/common/kernel_start.h"
#include "gpu/params.h"

namespace mlacheck::gpu::common {

// Quantizes Q as args.format says (nothing for bf16): the amax reduction and the encode kernel,
// the first after_previous, the encode with_previous when the amax kernel precedes it. Returns
// whether it queued a kernel.
bool launch_q_quant(const QuantArgs& args, StreamHandle stream);
// The LSE merge of `rows` query rows (T); most_splits: a bound on any row's splits
// (SplitPlan::most_splits), which picks how many partial rows its threads load ahead.
void launch_merge(const MergeArgs& args, int64_t rows, int most_splits, StreamHandle stream, KernelStart start);
// The work list of a chunked split plan (one block; work_list.hip).
void launch_work_list(const PlanArgs& args, StreamHandle stream, KernelStart start);

}  // namespace mlacheck::gpu::common
