// The portable family (gpu/family.h): plain HIP kernels (FMA, shared memory, shuffles), one block
// per (request, split), on every vendor.
#include "gpu/portable/family.h"

#include <stdexcept>
#include <string>

#include "gpu/family.h"
#include "gpu/portable/config.h"
#include "gpu/portable/instances.h"
#include "gpu/portable/launch.h"
#include "gpu/registry.h"

namespace mlacheck::gpu::portable {
namespace {

std::optional<std::string> supports(const Strategy& s, const problem::Batch&) {
  using std::to_string;
  const problem::Recipe& r = s.recipe;
  if (!find_instance(r))
    return "no portable kernel instance for KV " + std::string(problem::to_string(r.kv)) + " x P " +
           std::string(problem::to_string(r.p)) + " x softmax base " +
           std::string(problem::to_string(r.base)) + " (gpu/portable/instances.h)";
  if (s.schedule == Schedule::persistent) return "the portable kernel has no persistent schedule";
  if (s.tunables.threads != kThreads)
    return "threads " + to_string(s.tunables.threads) + ": the portable kernel is compiled for " +
           to_string(kThreads);
  if (s.tunables.cluster_merge != ClusterMerge::family_rule)
    return "the portable kernel merges split-K by the merge kernel only (the merge in clusters is the "
           "hopper family's)";
  return std::nullopt;
}

// A fixed split count per strategy (the recipe's default: gpu/registry.cpp), whatever the device.
problem::SplitPlan split_plan(const Strategy& s, const BatchShape&, int) {
  switch (s.schedule) {
    case Schedule::single_pass: return {};
    case Schedule::split_k: return problem::SplitPlan::uniform(s.tunables.splits);
    case Schedule::persistent: break;
  }
  throw std::logic_error("strategy " + s.name + ": the portable family has no persistent schedule");
}

}  // namespace

const Family& family() {
  static const Family f{
      FamilyId::portable,
      "portable",
      "plain HIP: FMA products, shared memory, shuffles; one block per request and split",
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

}  // namespace mlacheck::gpu::portable
