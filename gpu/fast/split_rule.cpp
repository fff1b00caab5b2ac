#include "gpu/fast/split_rule.h"

#include <algorithm>

#include "gpu/fast/config.h"

namespace mlacheck::gpu::fast {

int split_count(const SplitRule& rule, int64_t num_requests, int64_t max_kv_len) {
  if (num_requests <= 0 || max_kv_len <= 0 || rule.multiprocessors <= 0 || rule.tile_keys <= 0)
    return 0;
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // More splits than tiles only shortens the last tile of each split.
  const int64_t most = std::min<int64_t>(rule.max_splits, ceil_div(max_kv_len, rule.tile_keys));
  int best = 1;
  int64_t best_cost = INT64_MAX;
  for (int s = 1; s <= most; ++s) {
    const int64_t waves = ceil_div(num_requests * s, rule.multiprocessors);
    const int64_t tiles = ceil_div(ceil_div(max_kv_len, s), rule.tile_keys);
    const int64_t cost = waves * (tiles + rule.block_overhead_tiles);
    if (cost < best_cost) {
      best_cost = cost;
      best = s;
    }
  }
  return best == 1 ? 0 : best;
}

int persistent_chunk_keys(const SplitRule& rule, int64_t total_kv) {
  const int64_t tile = rule.tile_keys > 0 ? rule.tile_keys : 1;
  const int64_t items = static_cast<int64_t>(std::max(rule.multiprocessors, 1)) *
                        std::max(rule.items_per_sm, 1);
  const int64_t keys = std::max<int64_t>(total_kv, 0);
  const int64_t chunk = ((keys + items - 1) / items + tile - 1) / tile * tile;
  return static_cast<int>(std::clamp<int64_t>(chunk, tile, INT32_MAX / 2 / tile * tile));
}

SplitRule tuned_split_rule(int multiprocessors) {
  return {multiprocessors, kTileKeys, kBlockOverheadTiles, kMaxSplits, kPersistentItemsPerSm};
}

}  // namespace mlacheck::gpu::fast
