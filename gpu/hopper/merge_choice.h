#pragma once
// Where the hopper family's split-K merges a batch's partials (Tunables::cluster_merge): in the
// attention kernel's clusters, or by the merge kernel after it. Plain C++ (gpu/hopper/launch.cpp
// decides with it; tests/gpu/hopper_merge_choice_test.cpp checks it without a GPU).
#include <cstdint>
#include <optional>
#include <string>

#include "gpu/registry.h"
#include "problem/recipe.h"

namespace mlacheck::gpu::hopper {

// The split counts a cluster merges: 2 to the portable cluster size, 8 (gpu/sm90/cluster_merge.h
// kMaxClusterSplits, checked equal in gpu/hopper/attention.hip).
inline constexpr int kClusterMergeMaxSplits = 8;
constexpr bool cluster_merge_takes(int splits) { return splits >= 2 && splits <= kClusterMergeMaxSplits; }

// Why a cluster cannot merge a uniform plan of `splits` a request (bench's refusal of a row named
// @merge=cluster), or nothing where it can.
inline std::optional<std::string> cluster_merge_refusal(int splits) {
  if (cluster_merge_takes(splits)) return std::nullopt;
  if (splits <= 1) return "the plan has no split-K here (one pass a request): no partials to merge";
  return std::to_string(splits) + " splits a request (a cluster merges 2 to " +
         std::to_string(kClusterMergeMaxSplits) + ")";
}

// splits: the plan's splits per request (0 for a persistent plan, 1 for a single pass); capacity(): how many clusters of
// that many blocks run at once (cluster_merge_capacity: 0 where none), asked last, only where
// everything else says yes (it is a runtime query, once per instance and split count). In the clusters only where
// every request's cluster runs at once (a second wave of clusters cost more than the merge kernel:
// gpu/hopper/launch.cpp) and the caller does not read the partials back. The family's rule: bf16
// only. The decoded kernels' merge in their clusters (the same float operations) measured no faster
// than their merge kernel on an H100: 4 x 1024 1-3 % slower, 64 x 8192 within 1 % (docs/PERF.md,
// device call 10 of 2026-12-06's twenty-fourth session, with a second change beside it).
template <class Capacity>
constexpr bool merges_in_clusters(ClusterMerge choice, problem::KvFormat kv, int splits, int64_t requests,
                                  bool keep_partials, Capacity&& capacity) {
  const bool wanted = choice == ClusterMerge::cluster ||
                      (choice == ClusterMerge::family_rule && kv == problem::KvFormat::bf16);
  return wanted && cluster_merge_takes(splits) && !keep_partials && requests > 0 && requests <= capacity();
}

}  // namespace mlacheck::gpu::hopper
