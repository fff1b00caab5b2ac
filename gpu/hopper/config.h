#pragma once
// Compile-time constants of the Hopper family (NVIDIA sm_90a: warpgroup MMA), each with why. Plain
// C++: the host side (launcher, family, registry) reads them too. First version: correctness and
// the operand layout (gpu/sm90/wgmma.h DecodeTileLayout); nothing here is tuned yet.
#include "gpu/common/args.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu::hopper {

// Two consumer warpgroups per block take the tiles in turn (attention.hip): the owner of a tile
// computes its Sᵀ = K Qᵀ (the 64 keys as wgmma's M, the 16 heads as N) and softmax step, and each
// warpgroup computes Oᵀ = Vᵀ Pᵀ of every tile for its half of the 512 value dims. Measured
// (docs/PERF.md, "Device runs 1-8 of the overlap branch", run 3, 256 x 8192): 567 µs, against
// 700 µs when both warpgroups worked on each tile in lockstep (half of Sᵀ's dims each, exchanged,
// the softmax step duplicated).
inline constexpr int kWarpgroups = 2;
// The split-K merge's weights and merged LSE by the vendor's float32 exp and log (the merge kernel's
// and the clusters' alike: gpu/common/merge_weights.h), not the emulation's double-precision ones,
// whose code and constants cost the merge 1.0-1.2 µs of a 4 x 1024 call after the L2 flush where
// float32 weights cost nothing measurable (docs/probes/merge_stages.cu, H100: docs/PERF.md, asks
// 18-20 of 2026-12-07's thirtieth session); the kernels with it: split-K median 0.977-0.980 of the
// old binary over 20 rows (asks 5-6 of the thirty-first session). The outputs stay within the kernel
// bound, which allows the GPU's exp its 2 ulp already (the softmax's).
inline constexpr common::MergeWeights kMergeWeights = common::MergeWeights::vendor;
// The softmax in base 2 for every recipe (the family declares it, Family::softmax_base: the
// emulation replays the base-2 scores bit for bit, P = 2^(s log2(e) - m)): the vendor's exp2f is
// 4 instructions where expf is 8 (sm_90a SASS, nvcc 13.0), 8 exps a thread in each tile a
// warpgroup owns. FlashMLA's softmax is in base 2 too. Measured: split-K median 0.991 of base e
// over 24 rows, 1-3 % off the bf16-Q rows at 4 x 1024 and bs64_kv1024, the a4w4 control (base 2
// before) 1.000 (H100, ask 11 of 2026-12-07's thirty-second session, docs/PERF.md).
inline constexpr problem::SoftmaxBase kSoftmaxBase = problem::SoftmaxBase::two;
// Keys per tile = the online-softmax step (the emulation's softmax_tile): wgmma's M.
inline constexpr int kTileKeys = 64;
// Copy-pipeline depth: two tiles of 64 rows x 1152 bytes (144 KB) beside Q (18 KB) and P; a third
// tile (216 KB in all) does not fit beside Q in the 227 KB of shared memory.
inline constexpr int kStages = 2;
// Query tokens of one request taken together by the bf16 kernel (q_len > 1: speculative decoding),
// each tile copied once for all of them: each token's Q (18 KB), P and statistics beside the two
// stages, and its Oᵀ (256 dims x 16 heads: 32 floats a thread). Two fit (189 KB); three would
// (215 KB) but four would not (232 KB, past sm_90's 227), and q_len 2 (one draft token) is the
// common case: q_len 3 and 4 run as groups of two and one, or two and two.
inline constexpr int kMaxPack = 2;
// fp8 KV with bf16 Q and P (a16w8): the copy engine lands raw e4m3 rows (576 bytes each) in a ring
// of parts of kFp8PartRows keys, one part per warp of a tile's owner (16 rows: the rows of Sᵀ that
// warp holds). The owner decodes its rows to bf16 in registers, so the part is free again as soon
// as its warp has read it (attention.hip). The rest of the shared memory: two bf16 value tiles of
// 64 keys x 512 dims (64 KB each, one per warpgroup: each computes P·V of its own tiles over all
// 512 dims, and at the end of a token hands its partial of the other half through its tile), Q
// (18 KB) and P; 8 parts (72 KB: two tiles in flight,
// as many bytes as the bf16 ring's one tile in flight and one read) fit beside them, a ninth does
// not (gpu/hopper/traits.h's static_assert).
inline constexpr int kFp8PartRows = 16;
inline constexpr int kFp8RingParts = 8;
// The all-fp8 recipes with P·V on the e4m3 product (attention.hip kE4m3Pv): their value tiles hold
// e4m3 codes (32 KB each, 33 KB with the epilogue's exchange: traits.h), so the 62 KB saved go to
// the ring: 15 parts (3.75 tiles in flight) fit (traits.h's static_assert), a 16th does not.
inline constexpr int kE4m3RingParts = 15;
// The e4m3 product's own accumulation keeps 13 bits below a K step's largest term, truncated
// (NVIDIA does not document it; measured bit for bit on an H100 and an H200: ref/fp8_mma.h):
// promoted, each box of Q·Kᵀ (64 dims) and each tile of P·V (64 keys) goes into a fresh accumulator
// added to the scores or Oᵀ in float32, as DeepGEMM promotes every 128; chained, the products
// accumulate onto the scores and Oᵀ themselves (fewer waits and adds: 120 FADD fewer a tile in SASS),
// losing what lies 13 bits below the running sum. Promoted, so that no sum runs through the tensor
// core beyond 64 products.
inline constexpr bool kE4m3PromoteScores = true;
inline constexpr bool kE4m3PromoteOutputs = true;
// What the emulation must sum like for these kernels (problem/recipe.h Fp8Accumulation): both
// promoted are runs of 64 products (a box, a tile: the 64-key tiles start at each split's first
// key, as the emulation's softmax steps do), which fp8-acc=tc64 replays with ref/fp8_mma.h's
// model; the chained form (its scores in two accumulators of 288 products each, added in float32,
// Oᵀ carried across tiles) is neither tc64 nor tc, so it has no emulation: float32 sums are not
// what the hardware does (the probe), so verify would judge it against the wrong sums.
// tc64 holds the kernels to the model, bit for bit where the rest of the kernel is (verify: 0-4
// bf16 ulps on most pairs, docs/PERF.md tenth session).
inline constexpr problem::Fp8Accumulation kE4m3Accumulation =
    kE4m3PromoteScores && kE4m3PromoteOutputs ? problem::Fp8Accumulation::tc64
                                               : problem::Fp8Accumulation::f32;
// MXFP4 KV (a16w4): the fp8 design, with parts of kFp8PartRows rows of 288 code bytes plus a slot
// for their 18 scale bytes each (attention.hip). An MXFP4 tile is 19.6 KB, about half an fp8 tile,
// so 8 parts (two tiles) would keep only 39 KB in flight per SM; 10 (2.5 tiles, 66.5 KB) are as
// many as fit beside the two bf16 value tiles, Q and P (traits.h's static_assert). 8 measured
// the same (device run 1 of 2026-12-03's fifth session, 256 x 8192: a16w4 620.0 µs with 8 against
// 621.1 with 10, a4w4 846.3 against 852.4; 4 x 1024 18.7 against 18.0): the MXFP4 kernels are not
// waiting for bytes. 13 parts of a 640-byte scale slot (the paged spans' 512 bytes and the row
// offsets) measured the same as 10 too (device run 3 of 2026-12-03's sixth session).
inline constexpr int kMxfp4RingParts = 10;
// The split rule's constants (gpu/fast/split_rule.h's model): a block's fixed cost in tiles, as the
// mma family measured it (data/tunables/fast.def kBlockOverheadTiles; not re-measured here).
inline constexpr int kBlockOverheadTiles = 2;
inline constexpr int kMaxSplits = problem::kMaxPlanSplits;
// The persistent schedule's balanced plan (problem/split_plan.h): a request's fixed cost in tiles
// (its Q staging, the pipeline's refill and its partial's write and merge). Measured (docs/PERF.md,
// device run 2 of 2026-12-02's seventh session, `bench --overheads 0,1,2,4,8`, a16w16 / a16w8
// persistent): 4 was fastest or within 1 µs of it on the three ragged layout cases for bf16
// (ragged_bs64_kv8192 111.1 / 80.4 / 71.6 / 61.4 / 63.7 µs) and within 11 % for fp8 (8 was
// faster there on two of three). Swept again on today's kernels (device calls 2-3 of 2026-12-05's
// fourteenth session, H100, overheads 0-10, alternated twice): 4 stays for the kernels with bf16
// or f16 P (bf16 within about 1 % of 2-3 on the ragged cases); the all-fp8 kernels below.
inline constexpr int kBalancedOverheadTiles = 4;
// The all-fp8 kernels (both products on the e4m3 product, attention.hip kE4m3Pv): 6 was faster than
// 4 on every ragged case for each of a8w8, a8w8-static and a8w8-cast (ragged_bs256_kv4096 a8w8
// 85.2-85.9 -> 81.9-82.6 µs, ragged_bs64_kv8192 49.5-49.6 -> 47.5-48.0, ragged_bs32_kv4096
// 30.2-30.3 -> 28.5-28.7) and than 8 or 10 on two of three; on small uniform batches, where
// split-K is the faster schedule, 1-9 % slower (bs4_kv1024 a8w8 23.3 -> 25.2, a8w8-static 21.7 ->
// 23.8; device calls 3-4).
inline constexpr int kE4m3BalancedOverheadTiles = 6;
// a16w4 (MXFP4 KV, bf16 P): 3, once the decoded kernels' epilogue stored from registers (2ad9c17).
// Swept 3 / 4 / 5 on every layout case, twice (H100, device calls 3 and 5 of 2026-12-06's nineteenth
// session): 3 faster on each ragged case (ragged_bs32_kv4096 26.0-26.3 -> 24.7-25.1 µs,
// ragged_bs64_kv8192 44.7-45.2 -> 43.2-43.7, ragged_bs256_kv4096 88.5-88.7 -> 86.8-87.2), within 0.5 %
// on the paged ones, 1.4 % slower at most on a uniform one (where split-K is faster). a16w8 and a4w4
// keep 4: 3 was 8 % slower for a16w8 at ragged_bs256 and 2 % for a4w4.
inline constexpr int kMxfp4BalancedOverheadTiles = 3;
constexpr int balanced_overhead_tiles(problem::KvFormat kv, problem::PFormat p) {
  if (kv == problem::KvFormat::fp8 && p == problem::PFormat::fp8) return kE4m3BalancedOverheadTiles;
  if (kv == problem::KvFormat::mxfp4 && p == problem::PFormat::bf16) return kMxfp4BalancedOverheadTiles;
  return kBalancedOverheadTiles;
}
// The persistent schedule's work items per SM for a uniform batch (gpu/fast/split_rule.h
// persistent_chunk_keys): the mma family's measured choice (data/tunables/fast.def
// kPersistentItemsPerSm, device run 18: 2 beat 4 on all three ragged cases); not re-measured here.
inline constexpr int kPersistentItemsPerSm = 2;

}  // namespace mlacheck::gpu::hopper
