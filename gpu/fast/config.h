#pragma once
// Compile-time constants of the fast (matrix-instruction) decode kernels, each with why. Plain
// C++: the host side (launcher, registry, split rule) reads them too.
#include "problem/recipe.h"
#include "problem/shape.h"
#include "problem/split_plan.h"
#include "quant/hd.h"

namespace mlacheck::gpu::fast {

// kWarpsNvidia / kWarpsAmd (warps per block; gpu/fast/attention.hip picks the platform's), kTileKeys (keys per tile = the online-softmax step, the emulation's
// softmax_tile), kStages* (copy-pipeline depth per cache format), the split rule's constants: one data file, each row with the measurement that chose it.
#define TUNABLE(name, value, why) inline constexpr int name = value;
#include "data/tunables/fast.def"
#undef TUNABLE

// Q·Kᵀ is cut into this many groups of the 576 dims (36 products of 16, 9 per group); each group's
// warps keep their Q operands in registers for the whole split (9 x 4 registers).
inline constexpr int kDimGroups = 4;

// Shared-memory row strides, in elements of the stored type: a row of 576 values plus 16 bytes, so
// that the 8 rows one ldmatrix reads start in 8 different 16-byte bank groups (1168 B rows are 292
// words, 292 mod 32 = 4 words; 592 B fp8 rows are 148 words, mod 32 = 20; 304 B MXFP4 rows: 76, 12).
inline constexpr int kBf16RowStride = problem::kQkDim + 8;      // uint16 elements (Q, bf16 KV)
inline constexpr int kFp8RowStride = problem::kQkDim + 16;      // bytes
inline constexpr int kMxfp4RowStride = problem::kMxfp4RowBytes + 16;  // bytes
inline constexpr int kPStride = kTileKeys + 8;                  // P tile, uint16 elements

// Split-K limit (the split plans' and so the merge's).
inline constexpr int kMaxSplits = problem::kMaxPlanSplits;

// Recipes whose KV and P are fp8 run on f16 operands (fp8 values are f16 values, and e4m3 -> f16
// is one conversion per pair); their Q must then be fp8 too (a bf16 or MXFP4 Q is not an f16 value
// in general).
MLACHECK_HD constexpr bool f16_operands(problem::KvFormat kv, problem::PFormat p) {
  return kv == problem::KvFormat::fp8 && p == problem::PFormat::fp8;
}
constexpr bool q_fits_operands(const problem::Recipe& r) {
  return !f16_operands(r.kv, r.p) ||
         (r.q != problem::QFormat::bf16 && r.q != problem::QFormat::mxfp4_dynamic);
}

}  // namespace mlacheck::gpu::fast
