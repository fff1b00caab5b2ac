// The mma family (gpu/family.h): the matrix units through gpu/mma/ (mma.sync on NVIDIA, MFMA on
// AMD), tiles of keys in a copy pipeline (gpu/fast/), split-K by a per-batch rule or persistent
// blocks over a work list.
#include "gpu/fast/family.h"

#include <string>

#include "gpu/family.h"
#include "gpu/fast/config.h"
#include "gpu/fast/instances.h"
#include "gpu/fast/launch.h"
#include "gpu/fast/split_rule.h"
#include "gpu/registry.h"

namespace mlacheck::gpu::fast {
namespace {

std::optional<std::string> supports(const Strategy& s, const problem::Batch&) {
  using std::to_string;
  const problem::Recipe& r = s.recipe;
  if (r.p == problem::PFormat::f32)
    return "the mma kernel has no float32 P (its P·V operands are 16-bit)";
  if (!find_instance(r))
    return "no mma kernel instance for KV " + std::string(problem::to_string(r.kv)) + " x P " +
           std::string(problem::to_string(r.p)) + " x softmax base " +
           std::string(problem::to_string(r.base)) + " (gpu/fast/instances.h)";
  if (!q_fits_operands(r))
    return "the mma kernel runs fp8 KV x fp8 P on f16 operands, which needs an fp8 Q";
  if (r.softmax_tile != kTileKeys)
    return "the mma kernel's softmax step is its tile of " + to_string(kTileKeys) + " keys";
  if (s.schedule == Schedule::single_pass)
    return "the mma kernels run split-K or persistent (one split is a single pass)";
  if (s.tunables.balanced_overhead >= 0)
    return "the mma kernels' persistent schedule takes chunked work items, not a balanced plan's "
           "(a request overhead is the hopper family's tunable)";
  if (s.tunables.cluster_merge != ClusterMerge::family_rule)
    return "the mma kernels merge split-K by the merge kernel only (the merge in clusters is the hopper "
           "family's)";
  return std::nullopt;
}

problem::SplitPlan split_plan(const Strategy& s, const BatchShape& shape, int multiprocessors) {
  const SplitRule rule = tuned_split_rule(multiprocessors);
  switch (s.schedule) {
    case Schedule::single_pass:
      return {};
    case Schedule::split_k:
      return problem::SplitPlan::uniform(
          s.tunables.split_rule ? split_count(rule, shape.num_requests, shape.max_kv_len)
                                : s.tunables.splits);
    case Schedule::persistent:
      return problem::SplitPlan::chunked(s.tunables.chunk_keys > 0
                                             ? s.tunables.chunk_keys
                                             : persistent_chunk_keys(rule, shape.total_kv));
  }
  return {};
}

}  // namespace

const Family& family() {
  static const Family f{
      FamilyId::mma,
      "mma",
      "matrix units (mma.sync / MFMA) through gpu/mma/, key tiles in a copy pipeline",
      Vendors{true, true},
      common::MergeWeights::emulated,
      std::nullopt,
      &supports,
      &split_plan,
      "",
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
      &launch,
#else
      nullptr,
#endif
  };
  return f;
}

}  // namespace mlacheck::gpu::fast
