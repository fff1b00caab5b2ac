#pragma once
// The shared-memory plan of the fast kernel for each KV format, with the sizes it implies. Plain
// C++: the launcher asks it for the dynamic shared-memory size.
//
// Regions (bytes, in this order, each 16-byte aligned):
//   q       [16][kBf16RowStride] bf16     Q of the current query token, decoded
//   raw     [kStages] x stage             the copy pipeline's tiles in the cache's own format
//   tile    [kTileKeys][kBf16RowStride]   the current tile decoded to bf16 (fp8 / MXFP4 caches;
//                                         a bf16 cache is read in place from its raw stage)
//   s_part  [kDimGroups][16][kTileKeys] f32  partial scores of each quarter of the 576 dims
//   p       [2][16][kPStride] 16-bit      P of the tile (the second half: the low part of an f16 P)
//   stats   [3][16] f32                   alpha, then l and m at the end of a split
#include <cstddef>

#include "gpu/fast/config.h"
#include "problem/recipe.h"
#include "problem/shape.h"

namespace mlacheck::gpu::fast {

inline constexpr std::size_t kMaxSharedBytes = 232448;  // 227 KB: sm_90's per-block opt-in limit

constexpr std::size_t round16(std::size_t n) { return (n + 15) / 16 * 16; }

template <problem::KvFormat Kv>
struct Traits {
  // Copy stages (data/tunables/fast.def).
  static constexpr int kStages = Kv == problem::KvFormat::bf16  ? kStagesBf16
                                 : Kv == problem::KvFormat::fp8 ? kStagesFp8
                                                                : kStagesMxfp4;
  static constexpr bool kDecodes = Kv != problem::KvFormat::bf16;
  static constexpr std::size_t kRawRowBytes = Kv == problem::KvFormat::bf16   ? kBf16RowStride * 2
                                              : Kv == problem::KvFormat::fp8 ? kFp8RowStride
                                                                             : kMxfp4RowStride;
  // MXFP4 scales ride behind the codes of each stage: [kTileKeys][18] bytes.
  static constexpr std::size_t kScaleBytes =
      Kv == problem::KvFormat::mxfp4 ? round16(kTileKeys * problem::kMxfp4RowScales) : 0;
  static constexpr std::size_t kStageBytes = kTileKeys * kRawRowBytes + kScaleBytes;

  static constexpr std::size_t kQ = 0;
  static constexpr std::size_t kRaw = kQ + round16(problem::kNumHeads * kBf16RowStride * 2);
  static constexpr std::size_t kTile = kRaw + kStages * kStageBytes;
  static constexpr std::size_t kSPart =
      kTile + (kDecodes ? round16(kTileKeys * kBf16RowStride * 2) : 0);
  static constexpr std::size_t kP = kSPart + round16(kDimGroups * problem::kNumHeads * kTileKeys * 4);
  static constexpr std::size_t kStats = kP + round16(2 * problem::kNumHeads * kPStride * 2);
  static constexpr std::size_t kBytes = kStats + round16(3 * problem::kNumHeads * 4);
  // Sized for the H200. AMD's LDS is smaller (64 KB on gfx942, 160 KB on gfx950): the AMD build
  // compiles and is inspected, but a launch there would be refused until the stage counts (and,
  // for gfx942, the tile) get per-architecture values; nothing AMD has run.
  static_assert(kBytes <= kMaxSharedBytes, "the plan exceeds the H200's 227 KB per block");
  static_assert(kStageBytes % 16 == 0 && kRawRowBytes % 16 == 0);
};

}  // namespace mlacheck::gpu::fast
