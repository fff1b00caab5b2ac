#pragma once
// Compile-time constants of the Hopper family (NVIDIA sm_90a: warpgroup MMA), each with why. Plain
// C++: the host side (launcher, family, registry) reads them too. First version: correctness and
// the operand layout (gpu/sm90/wgmma.h DecodeTileLayout); nothing here is tuned yet.
#include "problem/split_plan.h"

namespace mlacheck::gpu::hopper {

// Two warpgroups per block share each tile: the 64 keys of a tile are the M of Sᵀ = K Qᵀ and the
// 64-dim chunks of the value the M of Oᵀ = Vᵀ Pᵀ (wgmma's M is 64); the 16 heads are N. Each
// warpgroup takes half of Sᵀ's dims and half of Oᵀ's. Measured (device run 15, 256 x 8192): one
// warpgroup 1263 µs, two 1267 µs before the later changes: halving each warpgroup's chain of
// products did not move the time (docs/PERF.md); two are kept as the producer-consumer design's
// consumers.
inline constexpr int kWarpgroups = 2;
// Keys per tile = the online-softmax step (the emulation's softmax_tile): wgmma's M.
inline constexpr int kTileKeys = 64;
// Copy-pipeline depth: two tiles of 64 rows x 1152 bytes (144 KB) beside Q (18 KB), P and the
// exchange buffers fill the 227 KB of shared memory.
inline constexpr int kStages = 2;
// The split rule's constants (gpu/fast/split_rule.h's model): a block's fixed cost in tiles, as the
// mma family measured it (data/tunables/fast.def kBlockOverheadTiles; not re-measured here).
inline constexpr int kBlockOverheadTiles = 2;
inline constexpr int kMaxSplits = problem::kMaxPlanSplits;

}  // namespace mlacheck::gpu::hopper
