#pragma once
// How many splits the fast strategies cut each request into, from what the host knows of a batch
// (its request count and longest request). Plain C++: the launcher and the registry (the emulation
// must use the same count) both call it.
#include <cstdint>

namespace mlacheck::gpu::fast {

struct SplitRule {
  int multiprocessors = 0;  // blocks that run at once (one block per SM: traits.h's plan)
  int tile_keys = 0;        // keys per tile (config.h kTileKeys)
  int block_overhead_tiles = 0;  // a block's fixed cost, in tiles
  int max_splits = 0;       // the merge's limit
  int items_per_sm = 0;     // persistent schedule: work items per SM for a uniform batch
};

// The split count S >= 1 that minimizes the modelled time waves(B·S) x (tiles(ceil(L / S)) +
// block overhead), i.e. whole waves of equally long blocks, the fewest splits among equals; 0 when
// S = 1 (a single pass, no merge).
int split_count(const SplitRule& rule, int64_t num_requests, int64_t max_kv_len);

// The persistent schedule's chunk: keys per work item such that the batch's total_kv keys make
// about items_per_sm items per SM, a whole number of tiles (at least one). Every request gets
// splits in proportion to its length.
int persistent_chunk_keys(const SplitRule& rule, int64_t total_kv);

// The rule with the tuned constants (gpu/fast/config.h, data/tunables/fast.def) for a device of
// `multiprocessors` SMs / CUs (DecodeParams::multiprocessors: the device's own count, at run time).
SplitRule tuned_split_rule(int multiprocessors);

}  // namespace mlacheck::gpu::fast
