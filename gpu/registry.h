#pragma once
// The strategy registry (DESIGN.md "Strategy = recipe x schedule"): ONE table of every GPU
// strategy. Dispatch, tests, `mlacheck verify`, `bench` and `list` all walk it, and every report
// names the entry that ran. Plain C++: the table exists in every build; only launching needs a GPU
// runtime.
//
// Names follow one grammar, recipe/schedule/family:
//   recipe    a problem::recipes() name (a16w16, a8w8, ...)
//   schedule  single-pass (one block per request, all its keys), split-k (n splits per request
//             plus an LSE-merge kernel) or persistent (one block per SM, each taking the next
//             work item of at most a chunk of keys from an atomic counter: every request gets
//             splits in proportion to its length, so ragged batches balance; plus the merge)
//   family    the kernel family (gpu/family.h): portable (plain HIP: FMA, shared memory, shuffles),
//             mma (the matrix units through gpu/mma/, gpu/fast/: tiles of keys in a copy pipeline)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/family.h"
#include "gpu/params.h"
#include "gpu/workspace.h"
#include "problem/batch.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu {

enum class Schedule : uint8_t { single_pass, split_k, persistent };
std::string_view to_string(Schedule);  // "single-pass", "split-k", "persistent"

// Where a split-K batch's partials are merged (the hopper family; the other families refuse any
// but family_rule): family_rule, the family's choice (gpu/hopper/launch.cpp: in the kernel's
// clusters for bf16, by the merge kernel for the decoded kernels); cluster, in the kernel's clusters
// wherever they can run (2 to 8 splits, every request's cluster at once), else by the merge kernel;
// kernel, always by the merge kernel after the attention kernel.
enum class ClusterMerge : uint8_t { family_rule, cluster, kernel };
std::string_view to_string(ClusterMerge);  // "rule", "cluster", "kernel"

struct Tunables {
  int threads = 0;  // threads per attention block (portable); 0: the kernel's own (mma: kWarps warps)
  int splits = 0;   // split-K splits per request (fixed); unused with split_rule
  // Splits chosen per batch (gpu/fast/split_rule.h) from its request count and longest request;
  // a count of 1 runs as a single pass.
  bool split_rule = false;
  // Keys per online-softmax step of the kernel, when it is the kernel's (its tile) and not the
  // recipe's default; 0: the recipe's. build_table writes it into Strategy::recipe.
  int softmax_tile = 0;
  // Persistent: keys per work item (fixed); 0: per batch by gpu/fast/split_rule.h.
  int chunk_keys = 0;
  // Persistent, balanced plans (the hopper family): a request's fixed cost in tiles; -1: the
  // family's own (gpu/hopper/config.h balanced_overhead_tiles).
  int balanced_overhead = -1;
  // The hopper family's bf16 kernel, where some q_len > 1: a request's query tokens taken
  // gpu/hopper/config.h kMaxPack at a time, each tile copied once for them; false: one at a time.
  bool pack_tokens = true;
  // Split-K: where the partials are merged (ClusterMerge); bench --merge sets it.
  ClusterMerge cluster_merge = ClusterMerge::family_rule;
};

struct Strategy {
  std::string name;  // recipe/schedule/family
  // The recipe's numerics with this strategy's softmax step (Tunables::softmax_tile): what the
  // emulated reference must run to be compared with this strategy.
  problem::Recipe recipe;
  Schedule schedule = Schedule::single_pass;
  const Family* family = nullptr;  // the kernel family that runs it (gpu/family.h); never null
  Tunables tunables;
  std::string why;  // why these tunables (the measurement or rule that chose them)
  // recipe.fp8_acc tc64 / tc: the order in which the kernel feeds a run of 64 products to the tensor
  // core, for the emulation (ref/decode_emulated.h EmulationOptions::tc_qk_order / tc_pv_order);
  // empty: in order.
  std::span<const int> tc_qk_order, tc_pv_order;

  // nullopt when the strategy runs this problem; otherwise why not, in words. Never a fallback:
  // an unsupported problem is reported as such. The checks every family shares, then the family's.
  std::optional<std::string> supports(const problem::Batch& batch,
                                      const problem::KvCache& cache) const;
  // The split plan a launch on this batch runs on a device with `multiprocessors` SMs / CUs
  // (DecodeParams::multiprocessors), which the emulated reference must run too
  // (ref::decode_emulated's plan).
  problem::SplitPlan emulated_plan(const problem::Batch& batch, int multiprocessors) const;
  // Where a launch on this batch keeps its scratch on such a device (gpu/workspace.h), and the
  // bytes of DecodeParams::workspace it needs.
  WorkspaceLayout workspace_layout(const problem::Batch& batch, int multiprocessors) const;
  std::size_t workspace_bytes(const problem::Batch& batch, int multiprocessors) const;
  // Queues the decode (gpu/family.h Launcher). Throws std::runtime_error where this build has not
  // compiled the family's kernels (no GPU runtime, or a family of another vendor).
  void launch(const DecodeParams& params, StreamHandle stream) const;
};

// The table, in a fixed order (by recipe as problem::recipes() lists them, then schedule).
const std::vector<Strategy>& strategies();
const Strategy* find_strategy(std::string_view name);
// Entries whose name matches a shell-style glob ('*' any run of characters, '/' included; '?' one
// character), or any of several separated by commas ("a16w16/*,a16w8/*"), in table order, each
// once.
std::vector<const Strategy*> match_strategies(std::string_view globs);
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace mlacheck::gpu
