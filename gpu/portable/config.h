#pragma once
// Compile-time constants of the portable attention kernel, each with why. Plain C++: the host side
// (workspace layout, registry) reads them too.
#include "problem/shape.h"

namespace mlacheck::gpu::portable {

// Threads per attention block: one per (head, key) of a key chunk in the score phase, and 16 per
// head (32 output dims each) in the P·V phase. A multiple of both warp widths (32, 64).
inline constexpr int kThreads = 256;
// Keys staged in shared memory at a time: kThreads / 16 heads.
inline constexpr int kChunkKeys = kThreads / problem::kNumHeads;
static_assert(kChunkKeys * problem::kNumHeads == kThreads);

// A staged row (Q of one head, or one KV row) as 288 words of two bf16 each, plus one pad word: a
// stride of 289 words puts the 16 rows of a chunk in 16 different banks (289 = 1 mod 32).
inline constexpr int kRowPairs = problem::kQkDim / 2;  // 288
inline constexpr int kVPairs = problem::kVDim / 2;     // 256
inline constexpr int kRowStride = kRowPairs + 1;       // 289 words

// Softmax steps of up to this many keys keep their scores in shared memory between the max pass
// and the P·V pass (8 KB); longer steps (softmax_tile = 0 over a long split) compute them again,
// which gives the same bits.
inline constexpr int kScoreCacheKeys = 128;

}  // namespace mlacheck::gpu::portable
