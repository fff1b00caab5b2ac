#pragma once
// The strategy registry (DESIGN.md "Strategy = recipe x schedule"): ONE table of every GPU
// strategy. Dispatch, tests, `mlacheck verify`, `bench` and `list` all walk it, and every report
// names the entry that ran. Plain C++: the table exists in every build; only launching needs a GPU
// runtime.
//
// Names follow one grammar, recipe/schedule/variant:
//   recipe    a problem::recipes() name (a16w16, a8w8, ...)
//   schedule  single-pass (one block per request, all its keys), split-k (n splits per request
//             plus an LSE-merge kernel) or persistent (one block per SM, each taking the next
//             work item of at most a chunk of keys from an atomic counter: every request gets
//             splits in proportion to its length, so ragged batches balance; plus the merge)
//   variant   the kernel family: portable (plain HIP: FMA, shared memory, shuffles), mma (the
//             matrix units through gpu/mma/, gpu/fast/: tiles of keys in a copy pipeline)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/params.h"
#include "problem/batch.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu {

enum class Schedule : uint8_t { single_pass, split_k, persistent };
std::string_view to_string(Schedule);  // "single-pass", "split-k", "persistent"

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
};

// The split plan (problem/split_plan.h) a launch runs for a batch of `num_requests` whose longest
// request has `max_kv_len` keys and which has `total_kv` keys in all (DecodeParams::max_kv_len,
// total_kv): single-pass none, split-k uniform (Tunables::splits or the split rule), persistent
// chunked (gpu/fast/split_rule.h's chunk).
problem::SplitPlan split_plan(Schedule schedule, const Tunables& tunables, int64_t num_requests,
                              int64_t max_kv_len, int64_t total_kv);

// Queues the whole decode (Q quantization, attention, merge) on `stream`: no allocation, no host
// synchronization, so a call can be captured in a graph. Throws std::invalid_argument for params
// that do not fit the strategy, gpu::Error when the runtime refuses a launch.
using Launcher = void (*)(const problem::Recipe& recipe, Schedule schedule, const Tunables& tunables,
                          const DecodeParams& params, StreamHandle stream);

struct Strategy {
  std::string name;  // recipe/schedule/variant
  // The recipe's numerics with this strategy's softmax step (Tunables::softmax_tile): what the
  // emulated reference must run to be compared with this strategy.
  problem::Recipe recipe;
  Schedule schedule = Schedule::single_pass;
  std::string variant;
  Tunables tunables;
  std::string why;             // why these tunables (the measurement or rule that chose them)
  Launcher launcher = nullptr;  // nullptr in a build without a GPU runtime

  // nullopt when the strategy runs this problem; otherwise why not, in words. Never a fallback:
  // an unsupported problem is reported as such.
  std::optional<std::string> supports(const problem::Batch& batch,
                                      const problem::KvCache& cache) const;
  // Bytes of DecodeParams::workspace a launch on this batch needs.
  std::size_t workspace_bytes(const problem::Batch& batch) const;
  // The split plan a launch on this batch runs, which the emulated reference must run too
  // (ref::decode_emulated's plan).
  problem::SplitPlan emulated_plan(const problem::Batch& batch) const {
    return split_plan(schedule, tunables, batch.num_requests(), batch.max_kv_len(),
                      batch.total_kv());
  }
  // Queues the decode (see Launcher). Throws std::runtime_error in a build without a GPU runtime.
  void launch(const DecodeParams& params, StreamHandle stream) const;
};

// The table, in a fixed order (by recipe as problem::recipes() lists them, then schedule).
const std::vector<Strategy>& strategies();
const Strategy* find_strategy(std::string_view name);
// Entries whose name matches a shell-style glob ('*' any run of characters, '/' included; '?' one
// character), in table order.
std::vector<const Strategy*> match_strategies(std::string_view glob);
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace mlacheck::gpu
