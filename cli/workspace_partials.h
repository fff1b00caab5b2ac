#pragma once
// The split partials a launch left in its workspace (gpu/workspace.h) in the golden schema's layout
// (io/golden.h "Kernel intermediates"): [T, S, 16, 512] and [T, S, 16] natural-log LSEs, S the most
// splits any request got. For `mlacheck drift --strategy` (cli/gpu_capture.h); plain C++, so its
// tests run without a GPU.
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "gpu/workspace.h"
#include "problem/batch.h"
#include "problem/split_plan.h"

namespace mlacheck::cli {

// `count` values of T at byte `offset` of a downloaded workspace. Throws std::logic_error when the
// region is absent or runs past the end.
template <class T>
std::vector<T> workspace_region(std::span<const unsigned char> workspace, std::size_t offset,
                                std::size_t count) {
  if (offset == gpu::WorkspaceLayout::kAbsent || offset + count * sizeof(T) > workspace.size())
    throw std::logic_error("a workspace region is missing or out of bounds");
  std::vector<T> out(count);
  if (count > 0) std::memcpy(out.data(), workspace.data() + offset, count * sizeof(T));
  return out;
}

struct SchemaPartials {
  int64_t splits = 0;       // S
  std::vector<float> out;   // [T, S, 16, 512]; 0 for splits a request does not have
  std::vector<float> lse;   // [T, S, 16]; -inf there
};

// A uniform plan stores token t, split s at row t·S + s; a chunked or balanced plan request b's
// token i, split s at part_start[b] + i·S_b + s (S_b and part_start from the workspace's work
// list). A balanced plan's request of one piece has its rows only when the launch kept its partials
// (gpu::DecodeParams::keep_partials, which KeepWorkspace::yes sets; without it the kernel writes
// that request's output directly and its rows hold whatever the workspace held, the poison bytes
// of DeviceProblem::run). base2: the kernel's LSEs are log2 (converted to ln). Throws
// std::logic_error when a region is missing, std::runtime_error when the work list puts a
// request's rows outside the workspace's partial rows.
SchemaPartials schema_partials(const problem::Batch& batch, const problem::SplitPlan& plan,
                               const gpu::WorkspaceLayout& layout,
                               std::span<const unsigned char> workspace, bool base2);

}  // namespace mlacheck::cli
