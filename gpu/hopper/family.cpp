// The Hopper family (gpu/family.h): NVIDIA sm_90a's warpgroup MMA (gpu/sm90/wgmma.h) for both
// products on tiles of 64 keys, bf16 caches read as stored, fp8 (e4m3fn) and MXFP4 caches decoded
// to bf16 by the tile's owner (gpu/hopper/attention.hip); NVIDIA only.
#include "gpu/hopper/family.h"

#include <string>

#include "gpu/availability.h"
#include "gpu/family.h"
#include "gpu/fast/split_rule.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/launch.h"
#include "gpu/registry.h"
#include "quant/formats.h"

namespace mlacheck::gpu::hopper {
namespace {

std::optional<std::string> supports(const Strategy& s, const problem::Batch&) {
  using std::to_string;
  const problem::Recipe& r = s.recipe;
  if (!find_instance(r))
    return "no hopper kernel instance for KV " + std::string(problem::to_string(r.kv)) + " x P " +
           std::string(problem::to_string(r.p)) + " x softmax base " +
           std::string(problem::to_string(r.base)) +
           " (gpu/hopper/instances.h, every one in base 2: bf16, fp8 or MXFP4 KV with bf16 P, fp8 KV with fp8 "
           "P, MXFP4 KV with f16 P)";
  if (r.kv == problem::KvFormat::fp8 && r.fp8 != quant::Fp8Format::e4m3fn)
    return "the hopper kernel decodes e4m3fn caches only (gpu/common/operand_decode.h's fast path)";
  if (r.kv == problem::KvFormat::fp8 && r.kv_scale != problem::KvScale::scores_output)
    return "the hopper kernel applies the fp8 KV scale to the scores and the output only "
           "(kv-scale=" + std::string(problem::to_string(problem::KvScale::scores_output)) + ")";
  if (!reads_q(r.p, r.q))
    return "the hopper kernel does not read Q " + std::string(problem::to_string(r.q)) + " with P " +
           std::string(problem::to_string(r.p)) +
           " (gpu/hopper/instances.h reads_q: bf16 with bf16 P, MXFP4 codes with f16 P, fp8 codes with fp8 P)";
  if (r.softmax_tile != kTileKeys)
    return "the hopper kernel's softmax step is its tile of " + to_string(kTileKeys) + " keys";
  if (s.schedule == Schedule::single_pass)
    return "the hopper kernels run split-K or persistent (one split is a single pass)";
  if (s.schedule != Schedule::split_k && s.tunables.cluster_merge != ClusterMerge::family_rule)
    return "the hopper persistent kernels merge by the merge kernel only (the merge in clusters is "
           "split-K's)";
  if (const auto cc = device_compute_capability(); cc && *cc != 90)
    return "the hopper kernels are sm_90a code; this GPU is compute capability " +
           to_string(*cc / 10) + "." + to_string(*cc % 10);
  return std::nullopt;
}

// Split-K: the mma family's wave model (gpu/fast/split_rule.h) with this family's tile. Persistent:
// a balanced plan over the device's SMs (problem/split_plan.h).
problem::SplitPlan split_plan(const Strategy& s, const BatchShape& shape, int multiprocessors) {
  const fast::SplitRule rule{multiprocessors, kTileKeys, kBlockOverheadTiles, kMaxSplits,
                             kPersistentItemsPerSm};
  switch (s.schedule) {
    case Schedule::single_pass:
      return {};
    case Schedule::split_k:
      return problem::SplitPlan::uniform(
          s.tunables.split_rule ? fast::split_count(rule, shape.num_requests, shape.max_kv_len)
                                : s.tunables.splits);
    case Schedule::persistent:
      // Fixed work items when asked for (bench --chunks), else equal shares of the batch per SM.
      if (s.tunables.chunk_keys > 0) return problem::SplitPlan::chunked(s.tunables.chunk_keys);
      return problem::SplitPlan::balanced_over(
          multiprocessors, kTileKeys,
          s.tunables.balanced_overhead >= 0 ? s.tunables.balanced_overhead
                                            : balanced_overhead_tiles(s.recipe.kv, s.recipe.p));
  }
  return {};
}

}  // namespace

const Family& family() {
  static const Family f{
      FamilyId::hopper,
      "hopper",
      "NVIDIA sm_90a: warpgroup MMA for both products, tiles by the bulk copy engine, warp-specialized",
      Vendors{true, false},
      kMergeWeights,
      kSoftmaxBase,
      &supports,
      &split_plan,
      "a build for sm_90a (CMAKE_CUDA_ARCHITECTURES holding 90a, the default)",
#if defined(MLACHECK_HAVE_SM90A)
      &launch,
#else
      nullptr,
#endif
  };
  return f;
}

}  // namespace mlacheck::gpu::hopper
