#pragma once
// The fixed dimensions of DeepSeek-R1 MLA decode (forward_absorb), DESIGN.md "The problem it checks".
#include <cstdint>

namespace mlacheck::problem {

inline constexpr int kNumHeads = 16;  // query heads; all share one latent KV row per token
inline constexpr int kQkDim = 576;    // 512 latent ("nope") + 64 rope
inline constexpr int kVDim = 512;     // V = the first 512 dims of the same KV row
inline constexpr int kRopeDim = kQkDim - kVDim;
inline constexpr int kMaxQSeqLen = 4;  // decode, and speculative decoding up to 4 (causal)

// MXFP4 rows: E2M1 codes packed two per byte, one E8M0 scale per 32 elements (NUMERICS §5).
inline constexpr int kMxfp4Block = 32;
inline constexpr int kMxfp4RowBytes = kQkDim / 2;                 // 288
inline constexpr int kMxfp4RowScales = kQkDim / kMxfp4Block;      // 18

// sm_scale = 1/sqrt(576) = 1/24 exactly in real numbers; the harness passes the Python double to
// aiter, which takes a float32 (NUMERICS §6.1).
inline constexpr double kSmScale = 1.0 / 24.0;

}  // namespace mlacheck::problem
