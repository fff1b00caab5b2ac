// The Hopper attention kernel (issue 10): all 16 heads of one (request, split) work item at a time,
// warp-specialized; split-K runs a block per item, the persistent schedule a block per SM that takes
// items from the chunked plan's work list until none is left (ItemSource). A producer warp streams the split's keys in tiles of kTileKeys cache rows
// through a kStages ring with the bulk tensor copy engine (TMA, gpu/sm90/tma.h): each stage has a
// "full" mbarrier per box of 64 dims (the copy engine counts the box's bytes off it, and Q·Kᵀ
// starts on the first boxes while the others land) and an "empty" one (each consumer warp arrives
// when its products have read the tile), so the next tile's copy starts the moment a stage is
// free, and no consumer thread spends an instruction on copies. The copies ask L2 to evict the
// cache's lines first (read once). The tiles land
// in the 128-byte-swizzle layout (gpu/sm90/wgmma.h Swizzle128Tile) that both products read without
// a second copy. Two consumer warpgroups take the tiles in turn, as FlashMLA's sm90 decode kernel
// does: tile t (of the ring's count) is owned by warpgroup t % 2, which
//   1. computes Sᵀ (64 keys x 16 heads) = K Qᵀ over all 576 dims (36 K-major steps of m64n16k16);
//   2. takes the softmax step (ref/decode_emulated.h with softmax_tile = kTileKeys) from the
//      running max and sum the other warpgroup published with tile t - 1: s = fl32(dot · score
//      scale), masked keys -inf; m' = max(m, tile max); α = e^(m - m'); p = e^(s - m'); l = l·α +
//      Σp (unrounded p); P rounded to bf16 and stored as Oᵀ's B operand [key][head]; then
//      publishes P, α, Σp and m' (a named barrier both warpgroups meet at);
//   3. Oᵀ (512 dims x 16 heads) = Oᵀ·α + Vᵀ Pᵀ over its own value dims, 256 w .. 256 w + 255
//      (4 chunks of 64 dims x 4 transposed-A steps over the tile's keys).
// The other warpgroup, before its own next tile, takes the published statistics (the same float
// operations, so both keep identical m and l) and does step 3 for its dims with the published P.
// So every tile goes through the reference's sequential softmax step exactly once, one
// warpgroup's softmax runs while the other's products do, and a stage is released as soon as
// both P·V products have read it (the other warpgroup's tile before its own Q·Kᵀ).
// A thread's elements of Sᵀ and of every Oᵀ chunk lie in the same four heads (the accumulator's
// columns), so α and l stay in registers. Every operand value is a bf16 value and every product
// exact; only the float32 summation order differs from the reference (the kernel bound's delta_acc).
// A contiguous cache is copied a whole tile per box (9 boxes of 64 rows x 64 dims); a paged one a
// row per box, each row looked up in the page table. Rows of a tile past its keys are zeroed
// before P·V reads them (a row of another request, or of a NaN-poisoned unused page, times P = 0
// would still be NaN).
//
// fp8 caches with bf16 Q and P (a16w8): every e4m3fn value is a bf16 value, so K and V decoded to
// bf16 without the scale are exact, and the per-tensor KV scale multiplies the scores (one rounding,
// fl32(score scale · KV scale), as the mma family and the emulation take it) and each output
// (fl32(fl32(acc / l) · KV scale)). The copy engine lands the raw rows (576 bytes, plain bulk copies:
// a row is no multiple of a 128-byte swizzle span) in a ring of parts of 16 keys, one part per warp
// of the tile's owner, the rows of Sᵀ that warp holds. The owner's warp loads its part's codes into
// registers (16-byte loads: rows 576 bytes apart fall on alternate bank halves, so a quarter-warp's
// two rows x 64 bytes meet no bank twice) and releases the part as soon as they have returned (a
// store that reads them, qk_decoded: not merely issued), so the copy engine keeps two tiles in
// flight however long the decode takes. The owner then decodes each 64-dim box to bf16
// pairs (gpu/common/operand_decode.h, about two instructions per code), feeds them to Sᵀ = K Qᵀ as
// wgmma's register A operand (no shared-memory round trip for K, and the rope dims are never
// stored), and stores the 512 value dims as the bf16 value tile of this warpgroup in the swizzled
// layout the bf16 kernel's P·V reads (rows past the tile's keys stored as zeros). Unlike step 3
// above, each warpgroup computes Oᵀ of its own tiles over all 512 value dims (both rescale by every
// tile's α, the other's taken from its published statistics), so the two share only the softmax
// statistics and their decode phases overlap (783 -> 556 µs at 256 x 8192, docs/PERF.md); the two
// partials are added at the end of a token, which changes only the float32 order. Each thread's A
// fragment takes 16 consecutive dims of a row per box in one load, so the K-major order of the
// products' dims is permuted within each box; Q is staged in the same permutation, which leaves
// every product the same and only the float32 summation order different (the bound's delta_acc).
// The value tile holds its dims in that permuted order too (each A fragment stored whole by one
// stmatrix), so Oᵀ's rows come out permuted within each 64-dim chunk; the epilogue stages the
// output in shared memory in dim order and stores 16-byte rows. In these kernels the owner
// publishes α and m' as soon as its tile's maxima are reduced, before the exps, and l is kept as
// each thread's partial sum (of its own p, rescaled by every tile's α), summed over all threads at
// the token's end: the other warpgroup's softmax step waits only for the maxima, and the row sums
// leave the per-tile chain (another float32 order of l, delta_acc's class again).
// Why not a converter warpgroup writing whole bf16 tiles (the issue's suggestion): a bf16 K-and-V
// tile is 72 KB, and the two it would need beside the fp8 ring and Q do not fit in 227 KB; decoding
// in the owner costs it about 600 instructions per tile, work its warps have time for (the tile's
// other warpgroup runs its own softmax meanwhile), and K never touches shared memory as bf16.
// MXFP4 caches with bf16 Q and P (a16w4): the fp8 path with other rows. A part holds 16 rows of 288
// code bytes (plain bulk copies) and their 18-byte E8M0 scale rows, 2-byte aligned: the copy engine
// takes the 16-byte-aligned span around a part's scale rows, landing them at the part's skew
// (produce_mxfp4: a contiguous part by one bulk copy, or a 1-D tensor map's boxes at the array's
// end; a paged part the same per run of rows in consecutive cache rows). The owner's threads load
// 8 code bytes (16 dims, all in one 32-dim block) and one scale byte per row and box, and decode
// them by byte-permute table lookups and one bf16x2 multiply by 2^(s-127) per pair, exactly
// (gpu/common/operand_decode.h mxfp4_octet_to_bf16_pairs, exact for every scale): the same dims per fragment column as the fp8 path, so Q is staged alike. No KV
// scale: the scores and the output are the fp8 path's without it.
// MXFP4 Q and KV with f16 P, base 2 (a4w4): the a16w4 kernel with Q from the Q quantization's codes
// and scales (stage_q_mxfp4, decoded to bf16 exactly), exp2 and a base-2 LSE, and P·V on f16
// operands: P rounded to f16 and the value tile stored as V rounded to f16 (the emulation's P·V
// operand type; exact for scales 104..140), each decoded bf16 pair converted by one cvt. (P as its
// exact high and low bf16 parts against the bf16 value tile, two P·V products a tile, ran at
// 850 µs at 256 x 8192 against 548; device run 1 of 2026-12-03's seventh session.)
// Split-K with 2 to 8 splits, bf16 (Fused): the blocks of one request's splits form a thread-block
// cluster; each writes its partial of a token to the workspace as for the merge kernel, and once all
// are written (an mbarrier each block's thread 0 arrives on in every peer, after one release fence:
// barrier.cluster would need the producer warp, which has left) the blocks merge the token's output
// from L2 between them (gpu/sm90/cluster_merge.h, the merge kernel's float operations): no second
// kernel.
// Query tokens of one request (q_len > 1, bf16, Pack = kMaxPack): taken two at a time, each tile
// copied once for the group (the union of its tokens' keys: every token's keys start at the split's
// first). The products are the issue's "16 heads x q_len packed": Sᵀ = K Qᵀ and Oᵀ = Vᵀ Pᵀ with N =
// 32 (both tokens' Q rows one B operand, both tokens' P columns another; m64n32k16 reads each K and V
// operand once for both tokens, where two m64n16 products read it twice: q_len 2 at 64 x 8192 in
// 203 µs against 243, docs/PERF.md). Each token keeps its own softmax state and statistics (its 16
// columns of the accumulators: elements 0..7 and 8..15), the owner takes the group's softmax steps
// together (softmax_step_packed: one barrier per reduction for both), and the group's last tile is
// masked for a token whose keys end before it (α = 1, p = 0: its state unchanged, the same bits as
// one token at a time; GpuHopperPackedTokens). The fp8 and MXFP4 kernels take one token at a time
// (their Oᵀ of 512 dims fills the registers).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <cuda.h>

#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/exact_quotient.h"
#include "gpu/common/operand_decode.h"
#include "gpu/common/operands.h"
#include "gpu/common/owner.h"
#include "gpu/common/rounding.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/kernels.h"
#include "gpu/mma/mma_nvidia.h"
#include "gpu/platform.h"
#include "gpu/sm90/cluster.h"
#include "gpu/sm90/cluster_merge.h"
#include "gpu/sm90/tensor_map.h"
#include "gpu/sm90/tma.h"
#include "gpu/sm90/wgmma.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::hopper {
namespace {

using common::AttentionArgs;
using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
using KvTile = sm90::Swizzle128Tile<kTileKeys>;
using QTile = sm90::Swizzle128Tile<kNumHeads>;
// Q of Pack packed tokens as one B operand of N = 16 Pack rows (token p's heads in rows 16 p ..).
template <int Pack>
using PackedQTile = sm90::Swizzle128Tile<kNumHeads * Pack>;
using Acc = sm90::WgTileC64x16;
using Barrier = mma::BulkBarrier;

constexpr int kConsumerThreads = kWarpgroups * sm90::kWarpgroupThreads;
constexpr int kConsumerWarps = kConsumerThreads / kWarpSize;
// bf16: the producer is one warp after the consumers. fp8 (and MXFP4 alike): a whole producer warpgroup, of which one
// warp copies and three leave at once, so that setmaxnreg can move its registers to the consumers:
// at 288 threads ptxas caps the kernel at 168 registers (a block counts as three whole warpgroups)
// and the fp8 consumers, holding a part's codes, the decoded A fragments and Oᵀ, spilled 164 bytes.
// The bf16 kernel of packed tokens (Pack > 1) likewise: its consumers hold each token's Oᵀ and
// scores (at 168 registers they spilled 188 to 718 bytes, ptxas -v).
template <problem::KvFormat Kv, int Pack = 1>
constexpr int kThreads =
    kConsumerThreads + (Kv != problem::KvFormat::bf16 || Pack > 1 ? sm90::kWarpgroupThreads : kWarpSize);
// setmaxnreg (fp8, MXFP4): the producer warpgroup keeps kProducerRegisters, each consumer thread
// gets kConsumerRegisters; at launch every thread has 168 (65536 / 384 rounded down to 8), and
// 2 x 128 x (224 - 168) = 128 x (168 - 56), within the file's 65536. ptxas keeps the producer's code
// within its share: at 40 (consumers 232) the producer, which also walks the work-item cursor
// (TokenCursor), spilled 68 to 148 bytes (ptxas -v) and a16w4 ran at 797 µs at 256 x 8192; at 56 /
// 224 the split-K instances spill 14 to 26 bytes and a16w4 ran at 714 µs, a4w4 1311 -> 1278, a16w8
// the same (567 µs) (device run 5 of 2026-12-02 session 5, both binaries in one call).
constexpr int kProducerRegisters = 56;
constexpr int kConsumerRegisters = 224;
static_assert(kWarpgroups * sm90::kWarpgroupThreads * kConsumerRegisters +
                  sm90::kWarpgroupThreads * kProducerRegisters <=
              65536, "setmaxnreg: the register file holds the consumers' and the producers' shares");
static_assert(kTileKeys == sm90::kWgM);
constexpr int kWarps = sm90::kWarpgroupWarps;                  // per warpgroup
constexpr int kQkSteps = kQkDim / sm90::kWgK16;               // 36: a tile's owner takes all dims
constexpr int kVChunks = kVDim / sm90::kWgM / kWarpgroups;     // 4 chunks of 64 value dims each
constexpr int kPvSteps = kTileKeys / sm90::kWgK16;             // 4
static_assert(kQkSteps * sm90::kWgK16 == kQkDim && kVChunks * sm90::kWgM * kWarpgroups == kVDim);
static_assert(sm90::kWgM == KvTile::kBoxDims, "a value chunk of Oᵀ is one box of the tile");
constexpr float kNegInf = -__builtin_huge_valf();

// Hardware barriers: 0 is the block's (unused: the producer never joins), 1 + w warpgroup w's,
// the consumers' (both warpgroups, not the producer), then per warpgroup w "w's tile published"
// (tile_published).
constexpr int kConsumerBarrier = 1 + kWarpgroups;
constexpr int kPublishedBarrier = kConsumerBarrier + 1;
static_assert(kPublishedBarrier + kWarpgroups <= 16, "sm_90 has 16 hardware barriers per block");

// fp8 tiles (a16w8): parts of kFp8PartRows raw rows, one per warp of the owner.
constexpr int kFp8RowBytes = kQkDim;                          // 576 e4m3 codes
constexpr int kFp8Parts = kTileKeys / kFp8PartRows;           // 4
constexpr int kFp8PartBytes = kFp8PartRows * kFp8RowBytes;    // 9216
constexpr int kValueBoxes = kVDim / KvTile::kBoxDims;         // 8
constexpr int kFp8ValueBytes = kValueBoxes * KvTile::kBoxBytes;  // 64 KB
static_assert(kFp8Parts == sm90::kWarpgroupWarps, "one part per warp of the tile's owner");
// The end of a token in the decoded kernels, in each warpgroup's value tile: the half of Oᵀ handed
// to the other warpgroup (kExchangeBytes: 4 chunks of 8 floats a thread), then the warpgroup's
// output staged [head][dim] with rows kStagedStride floats apart (256 dims + 4: a row 4 banks on
// from the last, 16-byte aligned).
constexpr int kExchangeBytes = (kVDim / 2 / sm90::kWgM) * Acc::ne * sm90::kWarpgroupThreads * sizeof(float);
constexpr int kStagedStride = kVDim / 2 + 4;
static_assert(kExchangeBytes + kNumHeads * kStagedStride * sizeof(float) <= kFp8ValueBytes && kStagedStride % 4 == 0,
              "the exchange and the staged output fit in a value tile");
static_assert(kFp8PartBytes % 16 == 0 && kFp8RowBytes % 16 == 0, "bulk copies move 16-byte multiples");

// MXFP4 tiles (a16w4): parts of kFp8PartRows rows as well, each 288 code bytes (plain bulk copies),
// then a slot for the part's scale bytes. A scale row is 18 bytes, so rows lie 2 bytes apart of
// 16-byte alignment: a copy takes the span from the 16-byte multiple below a part's first scale
// byte, `skew` = 18 r0 % 16 bytes before it, in whole 16-byte units (skew + 16 x 18 <= 302, so up
// to 304 bytes), into the slot; skew is what both the producer and the owner compute from the
// part's first row r0. A contiguous part's span is one plain bulk copy where it lies inside the
// scale array; where it would read past the array's end, the 1-D tensor map over the whole array
// (gpu/sm90/tensor_map.h byte_tensor_map_1d, which lands zeros there) copies it as up to three
// boxes of 128 bytes, back to back (a box must start at a 16-byte multiple: elsewhere it was an
// illegal instruction on the H200, device run 1 of hopper-mxfp4). The boxes everywhere, as first
// built, kept the consumers waiting for their parts' bytes a fifth of the time (ncu: 19 % of the
// a16w4 kernel's stall samples on that wait, against 1 % for fp8's one bulk copy a part): 623.5 ->
// 526.2 µs at 256 x 8192 with the bulk copy (device runs 3-4 of 2026-12-03's fifth session).
// A paged tile whose rows are consecutive cache rows (tile_is_one_run) takes a contiguous tile's
// copies, each row's scale offset stored as below; another paged part takes the same copies per run
// of its rows that lie in consecutive cache rows (one page, or adjacent ones): the run's codes by one bulk copy, its scales as the 16-byte-aligned
// span around them, at 32 bytes per row of the part from the run's first (a span of k rows, at most
// 14 + 18 k bytes rounded up to 16, fits in 32 k; a span that would read past the scale array's
// end, up to its last 16-byte multiple, and the bytes after it by the producer's plain loads); the
// producer stores each row's offset in the slot as a 16-bit word at kMxRowOffsetsAt. (A copy of
// each row's codes and a 32-byte box of its scales, as first built, kept the producer warp issuing
// 32 copies a part, one lane after another: paged (64) ran at 2.3-2.8x the contiguous cache, and
// ncu had half of the consumers' stall samples on their parts' full barriers; device runs 1-2 of
// 2026-12-03's sixth session.) The slot keeps its 2048 bytes: 640, with a ring of 13 parts instead
// of 10, measured the same (config.h).
// Why not each consumer loading its scales from global memory itself: a load per row and box, 18 a
// tile per thread, each a global latency that would have to be issued a tile ahead (registers beside
// Oᵀ of 512 dims), where the copy engine's boxes land on the part's own barrier with its codes and
// are read from shared memory like them.
constexpr int kMxRowBytes = problem::kMxfp4RowBytes;                // 288
constexpr int kMxRowScales = problem::kMxfp4RowScales;              // 18
constexpr int kMxCodeBytes = kFp8PartRows * kMxRowBytes;            // 4608
constexpr int kMxScaleBoxBytes = 128;                               // contiguous: up to 3 boxes
constexpr int kMxPagedRowSpan = 32;                                 // paged: a run's span room per row
constexpr int kMxScaleSlotBytes = 2048;
constexpr int kMxRowOffsetsAt = kMxScaleSlotBytes - 2 * kFp8PartRows;  // paged: u16 per row
constexpr int kMxPartBytes = kMxCodeBytes + kMxScaleSlotBytes;         // 6656
constexpr int kMxSkewMax = 14;                                      // 18 r % 16, an even number
static_assert(kMxCodeBytes % 128 == 0 && kMxPartBytes % 128 == 0 && kMxRowBytes % 16 == 0,
              "bulk copies: 16-byte rows; bulk tensor copies: 128-byte-aligned destinations");
static_assert(kMxScaleBoxBytes % 128 == 0 &&
                  3 * kMxScaleBoxBytes >= kMxSkewMax + kFp8PartRows * kMxRowScales &&
                  3 * kMxScaleBoxBytes <= kMxScaleSlotBytes,
              "a contiguous part's scales: three boxes back to back, each destination 128-byte aligned");
static_assert(kMxPagedRowSpan % 16 == 0 && kMxPagedRowSpan >= kMxSkewMax + kMxRowScales &&
                  kFp8PartRows * kMxPagedRowSpan <= kMxRowOffsetsAt && kMxScaleSlotBytes < 65536,
              "a paged part's scale slot: the runs' spans (k rows: 14 + 18 k bytes, rounded up to 16, "
              "within 32 k) apart from the row offsets, each a 16-bit word");

// The skew of a contiguous MXFP4 part whose first row is `row`: where its scales start in its
// first box (the box starting at the 16-byte multiple below).
__device__ __forceinline__ int mx_scale_skew(int64_t row) { return static_cast<int>((row * kMxRowScales) % 16); }
// The bytes of the 16-byte-aligned span of `rows` scale rows that start `skew` bytes into it.
__device__ __forceinline__ int mx_scale_span(int skew, int rows) { return (skew + rows * kMxRowScales + 15) / 16 * 16; }

// Shared memory (bytes from a 1024-byte-aligned base: the swizzle's period), per KV format; q, p,
// pub, red and stats once per token of a packed group (bf16, Pack tokens: p, pub and red
// [warpgroup][token]):
//   stage  bf16: kStages tiles of kTileKeys cache rows in KvTile layout;
//          fp8: the ring of kFp8RingParts parts of kFp8PartRows raw rows (576 bytes each);
//          MXFP4: the ring of kMxfp4RingParts parts of kFp8PartRows code rows and their scale slot
//   value  fp8, MXFP4: per warpgroup, the bf16 value tile of its latest tile (KvTile layout, boxes 0..7)
//   q      Q of the current token in QTile layout (16 rows; fp8: dims permuted as the A fragments)
//   p      per warpgroup: P of its latest tile, [64 keys][16 heads] bf16 (Oᵀ's B operand, MN-major;
//          a4w4 f16, the all-fp8 recipes the f16 values of e4m3fn codes)
//   pub    per warpgroup: its latest tile's α, Σp and new running max of each head, [3][16] floats
//          (the decoded kernels publish no Σp)
//   red    per warpgroup: per-warp partial maxima and sums of each head, [kWarps][16] floats each
//   stats  l and m of each head at the end of a split
//   bars   the full barriers (bf16: per stage and box; fp8: per part), then the empty ones, then
//          the work-item queue's full and empty ones (kItemSlots each)
//   items  the work-item queue's slots (the persistent schedule: ItemSource)
constexpr int kPBytes = kNumHeads * kTileKeys * 2;
constexpr int kPubBytes = 3 * kNumHeads * 4;
constexpr int kRedBytes = 2 * kWarps * kNumHeads * 4;
constexpr int kAlignSlack = KvTile::kAtomBytes;  // dynamic shared memory is only 16-byte aligned

// The persistent schedule's queue of work items from the producer warp to the consumers: two slots,
// so that the producer can take the next item while the consumers still read the last. A slot
// holds the whole item (QueuedItem, static_assert at its definition), its fields loaded by the
// producer.
constexpr int kItemSlots = 2;
constexpr int kItemSlotBytes = 64;
static_assert(kItemSlotBytes % 8 == 0, "the cluster barriers after the slots stay 8-byte aligned");

// The merge inside a cluster (Fused, bf16 only): the merge's scratch and the cluster's hand-off
// mbarrier ("every partial of the token written").
constexpr int kPartialsWritten = 0, kClusterBarriers = 1;

struct SharedPlan {
  int stage = 0, value = 0, q = 0, p = 0, pub = 0, red = 0, stats = 0, bars = 0, items = 0;
  int scratch = 0, cluster_bars = 0;  // Fused only
  int drain = 0;  // fp8 and MXFP4: a word per consumer warp (qk_decoded's release)
  int full_barriers = 0, empty_barriers = 0, bytes = 0;
};
constexpr SharedPlan shared_plan(bool fp8, bool fused = false, int ring_parts = kFp8RingParts,
                                  int part_bytes = kFp8PartBytes, int pack = 1) {
  SharedPlan s;
  if (fp8) {
    s.value = 0;
    s.q = kWarpgroups * kFp8ValueBytes;
    s.stage = s.q + QTile::kBytes;
    s.p = s.stage + ring_parts * part_bytes;
    s.full_barriers = s.empty_barriers = ring_parts;
  } else {
    s.stage = s.value = 0;
    s.q = kStages * KvTile::kBytes;
    s.p = s.q + pack * QTile::kBytes;
    s.full_barriers = kStages * KvTile::kBoxes;
    s.empty_barriers = kStages;
  }
  s.pub = s.p + kWarpgroups * pack * kPBytes;
  s.red = s.pub + kWarpgroups * pack * kPubBytes;
  s.stats = s.red + kWarpgroups * pack * kRedBytes;
  s.bars = s.stats + pack * 2 * kNumHeads * 4;
  s.items = s.bars + (s.full_barriers + s.empty_barriers + 2 * kItemSlots) * 8;  // ItemSource::slots()
  s.cluster_bars = s.items + kItemSlots * kItemSlotBytes;
  s.scratch = (s.cluster_bars + (fused ? kClusterBarriers * 8 : 0) + 15) / 16 * 16;
  s.drain = s.scratch + (fused ? static_cast<int>(sizeof(sm90::ClusterMergeScratch)) : 0);
  s.bytes = s.drain + (fp8 ? kConsumerWarps * 4 : 0) + kAlignSlack;
  return s;
}
template <problem::KvFormat Kv, bool Fused, int Pack = 1>
constexpr SharedPlan kPlan = Kv == problem::KvFormat::mxfp4
                                 ? shared_plan(true, false, kMxfp4RingParts, kMxPartBytes)
                                 : shared_plan(Kv == problem::KvFormat::fp8, Fused, kFp8RingParts, kFp8PartBytes, Pack);
constexpr bool plan_fits(const SharedPlan& s, bool fp8) {
  return s.bytes <= 232448 &&  // sm_90's 227 KB per block
         s.value % KvTile::kAtomBytes == 0 && s.q % KvTile::kAtomBytes == 0 &&
         s.stage % (fp8 ? 16 : KvTile::kAtomBytes) == 0 && s.p % 128 == 0 && s.bars % 8 == 0;
}
static_assert(plan_fits(shared_plan(false), false), "the bf16 plan exceeds sm_90's 227 KB or misaligns");
static_assert(plan_fits(shared_plan(true), true), "the fp8 plan exceeds sm_90's 227 KB or misaligns");
static_assert(plan_fits(shared_plan(false, true), false), "the fused bf16 plan exceeds sm_90's 227 KB");
static_assert(plan_fits(kPlan<problem::KvFormat::bf16, false, kMaxPack>, false) &&
                  plan_fits(kPlan<problem::KvFormat::bf16, true, kMaxPack>, false),
              "the bf16 plans of packed tokens exceed sm_90's 227 KB or misalign");
static_assert(plan_fits(kPlan<problem::KvFormat::mxfp4, false>, true) &&
                  kPlan<problem::KvFormat::mxfp4, false>.stage % 128 == 0,
              "the MXFP4 plan exceeds sm_90's 227 KB or misaligns its parts");
static_assert(KvTile::kBytes % KvTile::kAtomBytes == 0 && QTile::kBoxBytes % QTile::kAtomBytes == 0 &&
              kFp8ValueBytes % KvTile::kAtomBytes == 0);

__device__ __forceinline__ void copy_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src));
}
__device__ __forceinline__ void copy_commit_and_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}
// Generic-proxy writes (cp.async, st.shared) made visible to wgmma's asynchronous proxy and ordered
// before the copy engine's later writes to the same bytes; a barrier after it shows every thread's.
__device__ __forceinline__ void fence_to_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Barrier of one warpgroup's 128 threads.
__device__ __forceinline__ void warpgroup_sync(int warpgroup) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + warpgroup), "n"(sm90::kWarpgroupThreads) : "memory");
}
// Barrier of the two consumer warpgroups (the producer warp runs ahead on its own).
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kConsumerBarrier), "n"(kConsumerThreads) : "memory");
}
// Warpgroup w's tile published: w's threads after their writes, the other's before reading them,
// on the barrier 4 + w of both warpgroups. Both wait: each warpgroup meets the other at every
// tile, in tile order (its own tiles as publisher, the other's as reader), so the barrier also
// orders the reader's reads before the publisher's next writes. The two sides reach it at
// different instructions, so it is the non-aligned barrier.sync: with bar.sync
// (barrier.sync.aligned, which promises one instruction for all) synccheck reported divergent
// threads. racecheck reports the statistics (pub) as read before written, in every form tried: a
// false report, which it makes on a race-free reduction of this hand-off too as soon as a
// warpgroup-local barrier (reduce_heads') lies between two hand-offs
// (gpu/sm90/racecheck_handoff_repro.cu; scripts/device-check.sh keeps this kernel out of racecheck
// while that holds; docs/PERF.md, "Device runs 1-8 of the overlap branch" and after).
__device__ __forceinline__ void tile_published(int warpgroup) {
  __syncwarp();  // each warp arrives whole
  asm volatile("barrier.sync %0, %1;\n" ::"r"(kPublishedBarrier + warpgroup), "n"(kConsumerThreads) : "memory");
}

// fp8: the publisher's side of tile_published only arrives (its writes before the barrier are
// visible to the reader after its barrier.sync); the reader waits. Each publish is taken by exactly
// one read of the other warpgroup before the publisher's next one (attention kernel, take_stats).
__device__ __forceinline__ void tile_published_arrive(int warpgroup) {
  __syncwarp();
  asm volatile("barrier.arrive %0, %1;\n" ::"r"(kPublishedBarrier + warpgroup), "n"(kConsumerThreads) : "memory");
}

// The largest of two scores the reference's way (a NaN second operand is skipped).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }

// The keys of one query token in one split, in tiles: the producer and the consumers walk the same
// sequence (the ring's phases depend on it).
struct TokenKeys {
  int64_t first = 0, end = 0;
  int tiles = 0;
  __device__ int keys_in(int t) const {
    const int64_t left = end - (first + static_cast<int64_t>(t) * kTileKeys);
    return static_cast<int>(left < kTileKeys ? left : kTileKeys);
  }
};

// A work item: one split of one request. A uniform plan has num_splits per request, a block each
// (item = block index); a chunked plan (the persistent schedule) has S_b = item_start[b + 1] -
// item_start[b] for request b, taken one after another by persistent blocks (ItemSource). Either
// way the split's keys are the emulation's (problem/split_plan.h): ranges of ceil(L / S) keys.
// Rows, lengths and key positions fit 32 bits (the launcher requires fewer than 2^31 cache rows),
// which keeps the fp8 consumers' registers free for Oᵀ.
struct WorkItem {
  int32_t b = 0, row0 = 0, len = 0, q_len = 0, first = 0, end_of_split = 0;
  int64_t part_base = 0;  // the partial row of (token i, split): part_base + i·splits + split
  int split = 0, splits = 1;
  bool single_pass = true;

  WorkItem() = default;
  __device__ WorkItem(const AttentionArgs& a, int64_t item, bool chunked) {
    if (chunked) {
      single_pass = false;
      // Balanced: the item's request from its own table, one load instead of a binary search's chain.
      b = a.item_request != nullptr ? a.item_request[item] : common::owner_of(a.item_start, a.num_requests, item);
      splits = a.item_start[b + 1] - a.item_start[b];
      split = static_cast<int>(item - a.item_start[b]);
      part_base = a.part_start[b];
    } else {
      single_pass = a.num_splits == 0;
      splits = a.num_splits > 0 ? a.num_splits : 1;
      b = static_cast<int32_t>(item / splits);
      split = static_cast<int>(item % splits);
      part_base = a.qo_indptr[b] * static_cast<int64_t>(splits);
    }
    row0 = a.kv_indptr[b];
    len = a.kv_indptr[b + 1] - row0;
    q_len = a.qo_indptr[b + 1] - a.qo_indptr[b];
    if (chunked && a.unit_start != nullptr) {  // balanced: the split's units, and an unsplit request's output
      namespace bal = problem::balanced;
      single_pass = splits == 1 && a.unsplit_direct;
      const int64_t at = static_cast<int64_t>(b + 1) * a.overhead_units + a.unit_start[b];
      const int64_t q = *a.share;
      const int64_t from = bal::piece_first_unit(at, split, q) * a.unit_keys;
      const int64_t to = split + 1 < splits ? bal::piece_first_unit(at, split + 1, q) * a.unit_keys : len;
      first = static_cast<int32_t>(from < len ? from : len);
      end_of_split = static_cast<int32_t>(to < len ? to : len);
      return;
    }
    const int64_t per_split = single_pass ? len : (int64_t{len} + splits - 1) / splits;
    first = static_cast<int32_t>(split * per_split < len ? split * per_split : len);
    end_of_split = static_cast<int32_t>(first + per_split < len ? first + per_split : len);
  }
  // Token i of the request sees keys 0 .. len - q_len + i (causal rule, problem/batch.h).
  __device__ TokenKeys token(int64_t i) const {
    const int64_t visible_raw = len - q_len + i + 1;
    const int64_t visible = visible_raw > 0 ? visible_raw : 0;
    TokenKeys k;
    k.first = first;
    k.end = end_of_split < visible ? end_of_split : visible;
    const int64_t keys = k.end > first ? k.end - first : 0;
    k.tiles = static_cast<int>((keys + kTileKeys - 1) / kTileKeys);
    return k;
  }
};

// A slot of the work-item queue: the item (valid) or the end of the block's items.
struct QueuedItem {
  WorkItem w;
  int32_t valid = 0;
};
static_assert(sizeof(QueuedItem) <= kItemSlotBytes && alignof(QueuedItem) <= 8, "a queue slot holds a work item");

// The block's work items, in order. A uniform plan: the block's own item, then none. A balanced
// plan (the persistent schedule, one block per SM): the block's own run of items, block_first[i] ..
// block_first[i + 1] - 1, of equal cost by construction. A chunked plan (the same schedule with
// `--chunks`): the producer warp takes each next item from item_counter (dynamic, so items of
// unequal length balance across the SMs; work_list.hip resets the counter for each call) and hands it to the consumers through the queue's slot j %
// kItemSlots: its full barrier (the producer's one arrival) and its empty one (an arrival per
// consumer warp, once the warp has read the slot). The producer thus takes item j + 1, and
// streams its tiles, while the consumers still finish item j. The item past the last (>= count)
// is handed on too: it ends both loops.
// One pointer only (the queue's full barriers; then its empty ones, then the slots): the fp8
// consumers hold it beside Oᵀ of 512 dims, at the register limit. Chunked is a compile-time switch
// for the same reason: the split-K instances keep their registers (ptxas spilled 178 bytes of the
// fp8 consumers with the switch at run time, 8 without).
template <bool Chunked>
struct ItemSource {
  Barrier* full = nullptr;

  __device__ Barrier* empty() const { return full + kItemSlots; }
  __device__ QueuedItem* slots() const { return reinterpret_cast<QueuedItem*>(full + 2 * kItemSlots); }
  __device__ static int64_t count(const AttentionArgs& a) {
    return Chunked ? a.item_start[a.num_requests] : gridDim.x;
  }
  // The j-th item into w, by the producer warp (all its lanes) or by a consumer warp (all its
  // lanes); false past the last. Chunked: the producer loads the item's fields (WorkItem's chain of
  // dependent loads) and hands them over in the slot, so that the consumers, which reach an item
  // at the end of the previous one, read shared memory instead of waiting for global loads.
  template <bool Producer>
  __device__ bool take(const AttentionArgs& a, int j, WorkItem& w) const {
    if constexpr (!Chunked) {
      if (j != 0) return false;
      w = WorkItem(a, static_cast<int64_t>(blockIdx.x), false);
      return true;
    }
    const int slot = j % kItemSlots;
    const auto phase = static_cast<uint32_t>((j / kItemSlots) & 1);
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    if constexpr (Producer) {
      mma::bulk_barrier_wait(&empty()[slot], phase ^ 1);  // a fresh barrier's "previous" phase is done
      int32_t item = 0;
      if (lane == 0) {
        if (a.block_first != nullptr) {  // balanced: this block's own items, in order
          const int32_t mine = a.block_first[blockIdx.x] + j;
          item = mine < a.block_first[blockIdx.x + 1] ? mine : static_cast<int32_t>(count(a));
        } else {
          item = atomicAdd(a.item_counter, 1);
        }
      }
      item = __shfl_sync(0xFFFFFFFFu, item, 0);
      const bool valid = item < count(a);
      if (valid) w = WorkItem(a, item, true);
      if (lane == 0) {
        QueuedItem& q = slots()[slot];
        if (valid) q.w = w;
        q.valid = valid ? 1 : 0;
        mma::bulk_barrier_arrive(&full[slot]);  // release: the slot's writes before the arrival
      }
      return valid;
    } else {
      mma::bulk_barrier_wait(&full[slot], phase);
      const QueuedItem& q = slots()[slot];
      const bool valid = q.valid != 0;
      if (valid) w = q.w;
      __syncwarp();  // every lane's read before the warp's release
      if (lane == 0) mma::bulk_barrier_arrive(&empty()[slot]);
      __syncwarp();
      return valid;
    }
  }
};

// The query tokens of the block's work items, in order: (item, token) pairs. The producer and the
// consumers walk the same sequence (the ring's phases depend on it).
// Pack: the tokens of an item are taken up to Pack at a time (a group): the group's tiles are the
// union of its tokens' keys (its last token's: every token's keys start at the split's first), each
// tile copied once for all of them.
template <bool Producer, bool Chunked, int Pack = 1>
struct TokenCursor {
  ItemSource<Chunked> source;
  int taken = 0;
  WorkItem w;
  int i = 0;  // the group's first token of w
  bool more = false;

  __device__ TokenCursor(const AttentionArgs& a, const ItemSource<Chunked>& s) : source(s) { next_item(a); }
  __device__ void advance(const AttentionArgs& a) {
    i += Pack;
    if (i < w.q_len) return;
    next_item(a);
  }
  // The group's tokens: i .. i + group() - 1.
  __device__ int group() const { return Pack == 1 ? 1 : w.q_len - i < Pack ? w.q_len - i : Pack; }
  // The union of the group's keys.
  __device__ TokenKeys keys() const { return w.token(i + group() - 1); }

 private:
  __device__ void next_item(const AttentionArgs& a) {
    for (;;) {
      if (!source.template take<Producer>(a, taken++, w)) {
        more = false;
        return;
      }
      i = 0;
      if (w.q_len > 0) {
        more = true;
        return;
      }
    }
  }
};

// Run j of the key positions first .. first + count - 1 that lie in one page of a paged cache: run 0
// from `first`, run j > 0 from the j-th page boundary after it, each up to the next boundary; an
// empty run (from == to) past the last. The rows of a run are consecutive cache rows. Key
// positions are below 2^31 (kv_indptr is int32): the divisions are 32-bit ones.
struct PageRun {
  int64_t from = 0, to = 0;
};
__device__ __forceinline__ PageRun page_run(int64_t page, int64_t first, int64_t count, int j) {
  const int64_t end = first + count;
  const auto pages_before = [page](int64_t key) {
    return int64_t{static_cast<uint32_t>(key) / static_cast<uint32_t>(page)};
  };
  PageRun r;
  r.from = j == 0 ? first : (pages_before(first) + j) * page;
  if (r.from >= end) return PageRun{end, end};
  const int64_t boundary = (pages_before(r.from) + 1) * page;
  r.to = boundary < end ? boundary : end;
  return r;
}

// The bulk tensor copies' maps of a bf16 cache, one per box height 2^k rows, k = 0 .. 6 (a box
// height is fixed in its map): a contiguous cache reads whole tiles (k = 6), a paged one cuts each
// run of keys in one page into power-of-two boxes. Rows land where their tile row says, in the
// swizzled layout (the swizzle follows the shared address, so a box may start at any row).
// Measured (docs/PERF.md, device run 1 of 2026-12-02 session 5): with a box per row, paged
// (64) 32 x 4096 ran at 298 µs against 52 for the contiguous cache: 576 copies per tile.
inline constexpr int kRunMaps = 7;
static_assert(1 << (kRunMaps - 1) == kTileKeys, "the largest box is a whole tile");
struct KvMaps {
  CUtensorMap rows[kRunMaps];
  CUtensorMap scales;  // MXFP4: the block scales' map (produce_mxfp4)
};

// The producer warp: every tile of every token of the block's work items, each into the next stage
// once its readers have released it. A contiguous cache: one box of kTileKeys rows per 64 dims
// (rows past the cache's end land as zeros, and every box counts its whole bytes); a paged cache:
// the tile's n rows only, each run of them in one page as boxes of 2^k rows.
template <bool Chunked, int Pack>
__device__ void produce(const AttentionArgs& a, const ItemSource<Chunked>& items, const KvMaps& maps,
                        unsigned char* stages, Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const bool paged = a.kv_indices != nullptr;
  // The cache is read once: its lines go first from L2 (the split partials and the merge's reads
  // stay).
  const uint64_t policy = sm90::l2_evict_first_policy();
  int iter = 0;
  for (TokenCursor<true, Chunked, Pack> c(a, items); c.more; c.advance(a)) {
    const WorkItem& w = c.w;
    const TokenKeys k = c.keys();
    for (int t = 0; t < k.tiles; ++t, ++iter) {
      const int s = iter % kStages;
      const auto phase = static_cast<uint32_t>((iter / kStages) & 1);
      const int64_t t0 = k.first + static_cast<int64_t>(t) * kTileKeys;
      const int n = k.keys_in(t);
      // Paged: this lane's first run and its row, looked up before the wait for the stage, so that
      // the page table's latency passes during the wait.
      const PageRun first_run = paged ? page_run(a.page_size, t0, n, lane) : PageRun{};
      const int64_t first_row = first_run.from != first_run.to ? common::kv_row(a, w.b, first_run.from) : 0;
      mma::bulk_barrier_wait(&empty[s], phase ^ 1);  // a fresh barrier's "previous" phase is done
      unsigned char* dst = stages + s * KvTile::kBytes;
      Barrier* bars = full + s * KvTile::kBoxes;
      // Boxes of 2^k rows from cache row `row` into tile rows from `at` on.
      auto load = [&](int at, int k, int32_t row) {
#pragma unroll
        for (int box = 0; box < KvTile::kBoxes; ++box)
          sm90::tma_load_2d(dst + box * KvTile::kBoxBytes + at * KvTile::kRowBytes, &maps.rows[k],
                            box * KvTile::kBoxDims, row, &bars[box], policy);
      };
      // Each box's bytes announced on its barrier before any copy is issued.
      if (lane == 0)
        for (int box = 0; box < KvTile::kBoxes; ++box)
          mma::bulk_barrier_expect(&bars[box], static_cast<uint32_t>((paged ? n : kTileKeys) * KvTile::kRowBytes));
      if (!paged) {
        if (lane == 0) load(0, kRunMaps - 1, static_cast<int32_t>(w.row0 + t0));
      } else {
        // Lane j takes the tile's j-th run of keys in one page (the first from t0, the others
        // from a page boundary): its first row looked up, the run cut into boxes of 2^k rows,
        // largest first.
        __syncwarp();
        for (int j = lane;; j += kWarpSize) {
          const PageRun run = j == lane ? first_run : page_run(a.page_size, t0, n, j);
          if (run.from == run.to) break;
          const int64_t from = run.from, to = run.to;
          const auto row = static_cast<int32_t>(j == lane ? first_row : common::kv_row(a, w.b, from));
          for (int at = static_cast<int>(from - t0), left = static_cast<int>(to - from); left > 0;) {
            const int k = 31 - __clz(left);  // left <= kTileKeys = 2^(kRunMaps - 1)
            load(at, k, row + (at - static_cast<int>(from - t0)));
            at += 1 << k;
            left -= 1 << k;
          }
        }
      }
    }
  }
}

// The first step of reduce_heads alone: over the 8 lanes of a column (lane bits 2..4), within the warp.
template <bool Sum>
__device__ __forceinline__ void reduce_heads_in_warp(float (&v)[4]) {
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int mask = 4; mask <= 16; mask *= 2) {
      const float other = shfl_xor<kWarpSize>(v[c], mask);
      v[c] = Sum ? v[c] + other : max_of(v[c], other);
    }
}
// Max (Sum = false) or sum over the 64 keys of each of this thread's four heads, for each of the
// Pack tokens of a packed group: within the thread (its two rows), across the 8 lanes of a column
// (lane bits 2..4), across the warpgroup's 4 warps by shared memory, token p's through its own
// region, red + p * kRedBytes / 4, each in one token's order (so the same bits as one token at a
// time). Every thread gets the results for its heads. One barrier of the warpgroup for all tokens:
// each warpgroup reduces alone, in its own `red`.
template <bool Sum, int Pack>
__device__ void reduce_heads_packed(float (&v)[Pack][4], float* red, int warpgroup) {
#pragma unroll
  for (int p = 0; p < Pack; ++p) reduce_heads_in_warp<Sum>(v[p]);
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize % kWarps;
  constexpr int kRedFloats = kRedBytes / 4;
  if (lane < 4)
#pragma unroll
    for (int p = 0; p < Pack; ++p)
#pragma unroll
      for (int c = 0; c < 4; ++c) red[p * kRedFloats + warp * kNumHeads + 8 * (c / 2) + 2 * lane + c % 2] = v[p][c];
  warpgroup_sync(warpgroup);
#pragma unroll
  for (int p = 0; p < Pack; ++p)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int h = 8 * (c / 2) + 2 * (lane % 4) + c % 2;
      const float* r_p = red + p * kRedFloats;
      float r = r_p[h];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) r = Sum ? r + r_p[w * kNumHeads + h] : max_of(r, r_p[w * kNumHeads + h]);
      v[p][c] = r;
    }
}

// One token's (reduce_heads_packed of a group of one).
template <bool Sum>
__device__ void reduce_heads(float (&v)[4], float* red, int warpgroup) {
  float one[1][4] = {{v[0], v[1], v[2], v[3]}};
  reduce_heads_packed<Sum, 1>(one, red, warpgroup);
#pragma unroll
  for (int c = 0; c < 4; ++c) v[c] = one[0][c];
}

// Accumulator element l of this thread is at head column Acc::get_j(l): columns 8 (l / 4) + 2 t +
// l % 2, i.e. head slot c = 2 (l / 4) + l % 2 of the thread's four heads.
__device__ __forceinline__ int head_slot(int l) { return 2 * (l / 4) + l % 2; }

// Rows n .. kTileKeys - 1 of the tile's value boxes set to zero, by its owner: the copy left
// another request's rows or stale ones there, and P·V multiplies them by P = 0.
__device__ void zero_rows_past(unsigned char* kv, int n, int wg_tid) {
  constexpr int kChunksPerRow = KvTile::kRowBytes / 16;
  constexpr int kValueBoxes = kVDim / KvTile::kBoxDims;
  const int per_box = (kTileKeys - n) * kChunksPerRow;
  for (int idx = wg_tid; idx < kValueBoxes * per_box; idx += sm90::kWarpgroupThreads) {
    const int box = idx / per_box;
    const int rest = idx % per_box;
    *reinterpret_cast<uint4*>(kv + box * KvTile::kBoxBytes + (n + rest / kChunksPerRow) * KvTile::kRowBytes +
                              (rest % kChunksPerRow) * 16) = uint4{0, 0, 0, 0};
  }
}

// Oᵀ ·= α (this thread's four heads); SkipOnes: skipped where every α of the warp is 1 (x · 1 = x:
// the same bits), as it is after a token's first tiles, when the running maxima rarely move. The
// decoded kernels skip (with the uniform descriptors below, a16w8 551 -> 524 µs at 256 x 8192, a8w8
// 441 -> 417, a16w4 668 -> 631; device run 3 of 2026-12-03's fourth session); the bf16 kernel does
// not (both changes together made it 1.7 % slower at 256 x 8192 in the same run, where it is bound
// by the bytes; 2 % faster at 4 x 1024).
template <bool SkipOnes, int Chunks>
__device__ __forceinline__ void rescale_outputs(Acc (&o)[Chunks], const float (&alpha)[4]) {
  if constexpr (SkipOnes) {
    const bool ones = alpha[0] == 1.0f && alpha[1] == 1.0f && alpha[2] == 1.0f && alpha[3] == 1.0f;
    if (__all_sync(0xFFFFFFFFu, ones)) return;
  }
#pragma unroll
  for (int v = 0; v < Chunks; ++v)
#pragma unroll
    for (int l = 0; l < Acc::ne; ++l) o[v].x[l] *= alpha[head_slot(l)];
}

// SkipOnes: rescale_outputs'.
template <int Chunks, sm90::WgOperand Operand = sm90::WgOperand::bf16, bool SkipOnes = false>
__device__ __forceinline__ void issue_pv(Acc (&o)[Chunks], const float (&alpha)[4], const unsigned char* kv,
                                         const unsigned char* p, int first_chunk) {
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};
  rescale_outputs<SkipOnes>(o, alpha);
  const uint64_t v_desc = sm90::smem_descriptor_sw128(kv, KvTile::kLeading, KvTile::kStride);
  const uint64_t p_desc = sm90::smem_descriptor(p, kPLayout.leading_bytes(), kPLayout.stride_bytes());
#pragma unroll
  for (int v = 0; v < Chunks; ++v) sm90::wgmma_fence_operand(o[v]);
  sm90::wgmma_fence();
#pragma unroll
  for (int v = 0; v < Chunks; ++v)
#pragma unroll
    for (int k = 0; k < kPvSteps; ++k) {
      const int k0 = k * sm90::kWgK16;
      sm90::wgmma_m64n16k16<true, true, Operand>(
          o[v], sm90::descriptor_advance(v_desc, KvTile::mn_major_start((first_chunk + v) * sm90::kWgM, k0)),
          sm90::descriptor_advance(p_desc, kPLayout.offset_bytes(k0, 0)), true);
    }
  sm90::wgmma_commit();
}

// b^x in float32 for the softmax step: CUDA expf / exp2f (<= 2 ulp, the kernel bound's kGpuExpUlps).
template <bool Base2>
__device__ __forceinline__ float softmax_exp(float x) {
  return Base2 ? exp2f(x) : expf(x);
}

// Sᵀ = K Qᵀ of one tile over all 576 dims for Pack packed tokens as one product of N = 16 Pack
// (PackedQTile: token p's heads in columns 16 p ..; s[p] its columns), each box once its copy has
// landed (issued and committed, not waited): each K operand read once for all tokens. Every token's
// columns, a group of fewer tokens too (the last slot repeats its last token; its results are
// dropped). (Products of N = 16 per token, each accumulator rescaled or fenced between them, or under
// a branch, ptxas serialized: C7515, C7517, C7520.)
template <int Pack>
__device__ __forceinline__ void issue_qk_packed(Acc (&s)[Pack], const unsigned char* kv, const unsigned char* sq,
                                                Barrier* bars, uint32_t parity) {
  static_assert(Pack == 2, "two tokens: one m64n32 product (16 heads x 2)");
  using Q = PackedQTile<Pack>;
  const uint64_t k_desc = sm90::smem_descriptor_sw128(kv, KvTile::kKMajorLeading, KvTile::kStride);
  const uint64_t q_desc = sm90::smem_descriptor_sw128(sq, Q::kKMajorLeading, Q::kStride);
#pragma unroll
  for (int p = 0; p < Pack; ++p)
#pragma unroll
    for (int l = 0; l < Acc::ne; ++l) s[p].x[l] = 0.0f;
  constexpr int kStepsPerBox = KvTile::kBoxDims / sm90::kWgK16;
#pragma unroll
  for (int box = 0; box < KvTile::kBoxes; ++box) {
    mma::bulk_barrier_wait(&bars[box], parity);
#pragma unroll
    for (int p = 0; p < Pack; ++p) sm90::wgmma_fence_operand(s[p]);
    sm90::wgmma_fence();
#pragma unroll
    for (int k = box * kStepsPerBox; k < (box + 1) * kStepsPerBox; ++k) {
      const int k0 = k * sm90::kWgK16;
      sm90::wgmma_m64n32k16<false>(s[0], s[1], sm90::descriptor_advance(k_desc, KvTile::k_major_start(k0)),
                                   sm90::descriptor_advance(q_desc, Q::k_major_start(k0)), k > 0);
    }
  }
  sm90::wgmma_commit();
}

// Sᵀ = K Qᵀ of one tile over all 576 dims, each box of the tile once its copy has landed (issued
// and committed, not waited).
__device__ __forceinline__ void issue_qk(Acc& s, const unsigned char* kv, const unsigned char* sq,
                                         Barrier* bars, uint32_t parity) {
  const uint64_t k_desc = sm90::smem_descriptor_sw128(kv, KvTile::kKMajorLeading, KvTile::kStride);
  const uint64_t q_desc = sm90::smem_descriptor_sw128(sq, QTile::kKMajorLeading, QTile::kStride);
#pragma unroll
  for (int l = 0; l < Acc::ne; ++l) s.x[l] = 0.0f;
  constexpr int kStepsPerBox = KvTile::kBoxDims / sm90::kWgK16;
#pragma unroll
  for (int box = 0; box < KvTile::kBoxes; ++box) {
    mma::bulk_barrier_wait(&bars[box], parity);
    sm90::wgmma_fence_operand(s);
    sm90::wgmma_fence();
#pragma unroll
    for (int k = box * kStepsPerBox; k < (box + 1) * kStepsPerBox; ++k) {
      const int k0 = k * sm90::kWgK16;
      sm90::wgmma_m64n16k16<false>(s, sm90::descriptor_advance(k_desc, KvTile::k_major_start(k0)),
                                   sm90::descriptor_advance(q_desc, QTile::k_major_start(k0)), k > 0);
    }
  }
  sm90::wgmma_commit();
}

// --- fp8 tiles (a16w8) --------------------------------------------------------------------------

// The ring position of part `part` (the producer and the owners count parts alike: tile
// iteration x kFp8Parts + the owner's warp).
template <int Parts = kFp8RingParts>
__device__ __forceinline__ int ring_slot(int part) { return part % Parts; }
template <int Parts = kFp8RingParts>
__device__ __forceinline__ uint32_t ring_phase(int part) {
  return static_cast<uint32_t>((part / Parts) & 1);
}

// Paged caches, in the decoded kernels' producers (produce_fp8, produce_mxfp4): the cache rows of a
// tile's keys t0 + lane and t0 + 32 + lane, their page table entries loaded a tile ahead (tile
// t + 1's while tile t is copied; the request's page_indptr once a token) and the rows computed from
// them when the tile is copied, so that no page table latency lies between a free ring slot and its
// copy. Rows as 32-bit: fewer than 2^31 (launch.cpp), and the producer has 56 registers.
static_assert(kTileKeys == 2 * kWarpSize && kFp8Parts * kFp8PartRows == kTileKeys && 2 * kFp8PartRows == kWarpSize,
              "two keys a lane a tile; parts 0, 1 from the first, 2, 3 from the second");
struct PagedTileRows {
  int64_t page_base = 0;
  int32_t ahead[2] = {0, 0};  // the next tile's entries, as loaded (widened at use)
  __device__ void start(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k, int lane) {
    page_base = a.page_indptr[w.b];
    if (k.tiles > 0) look_ahead(a, k, 0, lane);
  }
  __device__ void look_ahead(const AttentionArgs& a, const TokenKeys& k, int tile, int lane) {
    const int64_t first = k.first + static_cast<int64_t>(tile) * kTileKeys;
#pragma unroll
    for (int i = 0; i < 2; ++i)
      if (lane + kWarpSize * i < k.keys_in(tile)) ahead[i] = common::page_of(a, page_base, first + lane + kWarpSize * i);
  }
  // Tile t's rows (0 past its keys); tile t + 1's entries loaded on the way.
  __device__ void rows(const AttentionArgs& a, const TokenKeys& k, int t, int lane, int32_t (&key_rows)[2]) {
    const int32_t pages[2] = {ahead[0], ahead[1]};
    if (t + 1 < k.tiles) look_ahead(a, k, t + 1, lane);
    const int64_t t0 = k.first + static_cast<int64_t>(t) * kTileKeys;
    const int n = k.keys_in(t);
#pragma unroll
    for (int i = 0; i < 2; ++i)
      key_rows[i] = lane + kWarpSize * i < n
                        ? static_cast<int32_t>(common::row_in_page(a, pages[i], t0 + lane + kWarpSize * i))
                        : 0;
  }
};

// Part q of a paged tile (key_rows: PagedTileRows::rows) cut into runs of rows that lie in
// consecutive cache rows (one page, or adjacent ones), each copied by one bulk copy from its first
// lane: lane r < rows holds the part's row r (key t0 + 16 q + r: lane 16 (q % 2) + r's row of its
// first (q < 2) or second key), and a run starts where a row does not follow the one before it.
struct PartRun {
  int32_t row = 0;        // this lane's cache row
  int32_t first_row = 0;  // the cache row of its run's first row
  int first = 0, end = 0;  // its run's first and past-the-last rows of the part
  bool mine = false;       // lane < rows
  bool leads = false;      // this lane holds its run's first row
};
__device__ __forceinline__ PartRun part_run(const int32_t (&key_rows)[2], int q, int rows, int lane) {
  PartRun r;
  r.row = __shfl_sync(0xFFFFFFFFu, q < 2 ? key_rows[0] : key_rows[1], (kFp8PartRows * (q % 2) + lane) % kWarpSize);
  const int32_t before = __shfl_up_sync(0xFFFFFFFFu, r.row, 1);
  r.mine = lane < rows;
  const uint32_t starts = __ballot_sync(0xFFFFFFFFu, r.mine && (lane == 0 || r.row != before + 1));
  // This row's run: its first row (the last start at or before it) and its end (the next start,
  // or the part's rows).
  const uint32_t upto = starts & (0xFFFFFFFFu >> (kWarpSize - 1 - lane));
  r.first = r.mine ? kWarpSize - 1 - __clz(upto) : 0;
  const uint32_t after = lane + 1 < kWarpSize ? starts >> (lane + 1) : 0u;
  r.end = after != 0 ? lane + __ffs(after) : rows;
  r.first_row = __shfl_sync(0xFFFFFFFFu, r.row, r.first);
  r.leads = r.mine && r.first == lane;
  return r;
}

// Whether a paged tile's n keys lie in consecutive cache rows (one page of 64 keys, or pages in
// order), from `first_row` on (key_rows: PagedTileRows::rows): then the producers copy it as they copy
// a contiguous tile. (By runs of each part, part_run, paged (64) fp8 took 1.17x and 1.27x the
// contiguous cache at 32 x 4096 and 128 x 4096 even with the pages in order, its copies the same
// bytes by the same bulk copies; copied whole, 1.06x and 1.10x: device run 7 of 2026-12-03's
// seventh session.)
__device__ __forceinline__ bool tile_is_one_run(const int32_t (&key_rows)[2], int n, int lane, int32_t& first_row) {
  first_row = __shfl_sync(0xFFFFFFFFu, key_rows[0], 0);
  bool follows = true;
#pragma unroll
  for (int i = 0; i < 2; ++i)
    if (lane + kWarpSize * i < n) follows = follows && key_rows[i] == first_row + lane + kWarpSize * i;
  return __all_sync(0xFFFFFFFFu, follows);
}

// Where a producer finds a tile's cache rows, one kind of cache each: tile(a, k, t, lane, key_rows,
// first_row) says whether the tile's rows are consecutive from first_row, else key_rows holds each
// key's row (PagedTileRows::rows). The producers' tile loops are instantiated per kind (produce_
// fp8_tiles, produce_mxfp4_tiles) so that only its own state lives across the loop: one loop over
// both paged kinds spilled 94-128 bytes in the MXFP4 producers (ptxas), where main's spilled 4.
struct ContiguousTiles {
  static constexpr bool kPaged = false;
  int64_t row0 = 0;  // the token's first key's row
  __device__ void start(const AttentionArgs&, const WorkItem& w, const TokenKeys& k, int) {
    row0 = int64_t{w.row0} + k.first;
  }
  __device__ bool tile(const AttentionArgs&, const TokenKeys&, int t, int, int32_t (&)[2], int64_t& first_row) {
    first_row = row0 + static_cast<int64_t>(t) * kTileKeys;
    return true;
  }
};

// Paged caches whose pages hold whole tiles (page_size % kTileKeys == 0), read by a split that
// starts on a tile boundary (a uniform plan's ceil(L / S) keys a split, a multiple of 64: 32 x 4096
// in 4 splits): every tile lies in one page, its rows consecutive from
// kv_indices[page_base + t0 / page_size] * page_size + t0 % page_size. One page table entry a page,
// loaded by every lane alike (one broadcast load) a tile before its page's first tile is copied;
// no per-key division and no vote.
// (PagedTileRows and tile_is_one_run were the whole paged MXFP4 overhead: without them the
// producer ran a16w4 at 32 x 4096 in 44.2 µs against 53.0 paged and 44.0 contiguous, device run 5
// of 2026-12-04.)
struct PagedTileStarts {
  static constexpr bool kPaged = true;
  int64_t page_base = 0;
  uint32_t page = 0, within = 0;  // tile t's page (its index in the request's) and first row in it
  int32_t entry = 0;              // kv_indices of `page`
  __device__ static bool apply(const AttentionArgs& a, const TokenKeys& k) {
    return a.page_size % kTileKeys == 0 && k.first % kTileKeys == 0;
  }
  __device__ void start(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k, int) {
    page_base = a.page_indptr[w.b];
    page = static_cast<uint32_t>(k.first) / static_cast<uint32_t>(a.page_size);
    within = static_cast<uint32_t>(k.first) % static_cast<uint32_t>(a.page_size);
    if (k.tiles > 0) entry = a.kv_indices[page_base + page];
  }
  // Tile t's first cache row, the tiles taken in order; the next page's entry loaded on the way.
  __device__ bool tile(const AttentionArgs& a, const TokenKeys& k, int t, int, int32_t (&)[2], int64_t& first_row) {
    first_row = common::page_row(a, entry, within);
    within += kTileKeys;
    if (within == static_cast<uint32_t>(a.page_size)) {
      within = 0;
      ++page;
      if (t + 1 < k.tiles) entry = a.kv_indices[page_base + page];
    }
    return true;
  }
};

// Any other paged split: each key's row (PagedTileRows), a tile in one run copied whole.
struct PagedRunTiles {
  static constexpr bool kPaged = true;
  PagedTileRows rows;
  __device__ void start(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k, int lane) {
    rows.start(a, w, k, lane);
  }
  __device__ bool tile(const AttentionArgs& a, const TokenKeys& k, int t, int lane, int32_t (&key_rows)[2],
                       int64_t& first_row) {
    rows.rows(a, k, t, lane, key_rows);
    int32_t first = 0;
    const bool whole = tile_is_one_run(key_rows, k.keys_in(t), lane, first);
    first_row = first;
    return whole;
  }
};

// The producer warp for an fp8 cache: every tile of every token, as kFp8Parts parts of
// kFp8PartRows rows, each into the next ring slot once its reader has released it. Only the tile's
// keys are copied (a part past them announces 0 bytes): a contiguous cache, and a paged tile whose
// rows are consecutive cache rows (PagedTileStarts where pages hold whole tiles, else
// tile_is_one_run), one bulk copy per part; another paged tile a
// copy per run of each part's rows in consecutive cache rows (part_run). The rows past
// the keys keep what the slot held: their scores are masked and their values stored as zeros
// (qk_decoded).
template <class Tiles>
__device__ __forceinline__ void produce_fp8_tiles(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k,
                                                  unsigned char* ring, Barrier* full, Barrier* empty,
                                                  uint64_t policy, int lane, int& part) {
  Tiles tiles;
  tiles.start(a, w, k, lane);
  for (int t = 0; t < k.tiles; ++t) {
    const int n = k.keys_in(t);
    // The tile's first cache row where its rows are consecutive (`whole`), else each key's row.
    int32_t key_rows[2] = {0, 0};
    int64_t tile_row0 = 0;
    const bool whole = tiles.tile(a, k, t, lane, key_rows, tile_row0);
    for (int q = 0; q < kFp8Parts; ++q, ++part) {
      const int slot = ring_slot(part);
      const int left = n - q * kFp8PartRows;
      const int rows = left < 0 ? 0 : left < kFp8PartRows ? left : kFp8PartRows;
      mma::bulk_barrier_wait(&empty[slot], ring_phase(part) ^ 1);  // a fresh barrier's "previous" phase is done
      unsigned char* dst = ring + slot * kFp8PartBytes;
      if (lane == 0) mma::bulk_barrier_expect(&full[slot], static_cast<uint32_t>(rows * kFp8RowBytes));
      if (whole) {
        if (lane == 0 && rows > 0)
          sm90::bulk_copy(dst, a.kv_fp8 + (tile_row0 + q * kFp8PartRows) * kFp8RowBytes,
                          static_cast<uint32_t>(rows * kFp8RowBytes), &full[slot], policy);
      } else {
        const PartRun run = part_run(key_rows, q, rows, lane);
        __syncwarp();  // the bytes announced before any copy can land
        if (run.leads)
          sm90::bulk_copy(dst + lane * kFp8RowBytes, a.kv_fp8 + int64_t{run.row} * kFp8RowBytes,
                          static_cast<uint32_t>((run.end - lane) * kFp8RowBytes), &full[slot], policy);
      }
    }
  }
}

template <bool Chunked>
__device__ void produce_fp8(const AttentionArgs& a, const ItemSource<Chunked>& items, unsigned char* ring,
                            Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const uint64_t policy = sm90::l2_evict_first_policy();  // the cache is read once
  int part = 0;
  for (TokenCursor<true, Chunked> c(a, items); c.more; c.advance(a)) {
    const TokenKeys k = c.w.token(c.i);
    if (a.kv_indices == nullptr)
      produce_fp8_tiles<ContiguousTiles>(a, c.w, k, ring, full, empty, policy, lane, part);
    else if (PagedTileStarts::apply(a, k))
      produce_fp8_tiles<PagedTileStarts>(a, c.w, k, ring, full, empty, policy, lane, part);
    else
      produce_fp8_tiles<PagedRunTiles>(a, c.w, k, ring, full, empty, policy, lane, part);
  }
}

// The producer warp for an MXFP4 cache: produce_fp8's parts, each of the part's code rows (288
// bytes) and their scale rows (18 bytes, from a 16-byte multiple: a contiguous part by one bulk
// copy, or at the array's end as many 128-byte boxes of the 1-D tensor map `map` as its skew and
// rows need; a paged tile in one run the same from its first row; another paged part the same per
// run of its rows in consecutive cache rows; paged: each row's offset in the slot stored) on the
// part's barrier. Bytes of a span or box past the part's rows (or the
// array's end) are the next rows' scales (or zeros): they belong to masked keys, like the stale
// codes of the rows past the keys (qk_decoded).
template <class Tiles>
__device__ __forceinline__ void produce_mxfp4_tiles(const AttentionArgs& a, const WorkItem& w, const TokenKeys& k,
                                                    const CUtensorMap* map, unsigned char* ring, Barrier* full,
                                                    Barrier* empty, uint64_t policy, int lane, int& part) {
  constexpr bool paged = Tiles::kPaged;
  Tiles tiles;
  tiles.start(a, w, k, lane);
  for (int t = 0; t < k.tiles; ++t) {
    const int n = k.keys_in(t);
    // The tile's first cache row where its rows are consecutive (produce_fp8_tiles).
    int32_t key_rows[2] = {0, 0};
    int64_t tile_row0 = 0;
    const bool whole = tiles.tile(a, k, t, lane, key_rows, tile_row0);
    for (int q = 0; q < kFp8Parts; ++q, ++part) {
      const int slot = ring_slot<kMxfp4RingParts>(part);
      mma::bulk_barrier_wait(&empty[slot], ring_phase<kMxfp4RingParts>(part) ^ 1);
      const int left = n - q * kFp8PartRows;
      const int rows = left < 0 ? 0 : left < kFp8PartRows ? left : kFp8PartRows;
      unsigned char* dst = ring + slot * kMxPartBytes;
      unsigned char* scales = dst + kMxCodeBytes;
      if (whole) {
        const int64_t row0 = tile_row0 + q * kFp8PartRows;  // the part's first cache row
        const int skew = mx_scale_skew(row0);
        const int boxes = rows > 0 ? (skew + rows * kMxRowScales + kMxScaleBoxBytes - 1) / kMxScaleBoxBytes : 0;
        const int64_t start = row0 * kMxRowScales - skew;  // a 16-byte multiple
        // The part's scales from `start` in whole 16-byte units: one plain bulk copy where they
        // lie inside the scale array, else (the array's last bytes) the tensor map's boxes,
        // which land zeros past its end. The same bytes at the same place either way.
        const int span = rows > 0 ? mx_scale_span(skew, rows) : 0;
        const bool inside = start + span <= a.cache_rows * kMxRowScales;
        if (paged) {  // the owner of a paged part reads each row's scale offset (Mxfp4Rows::load)
          if (lane < kFp8PartRows)
            reinterpret_cast<uint16_t*>(scales + kMxRowOffsetsAt)[lane] =
                static_cast<uint16_t>(lane < rows ? skew + kMxRowScales * lane : 0);
          __syncwarp();  // stored before the barrier's arrival (release) by lane 0
        }
        if (lane == 0) {
          mma::bulk_barrier_expect(&full[slot], static_cast<uint32_t>(rows * kMxRowBytes +
                                                                      (inside ? span : boxes * kMxScaleBoxBytes)));
          if (rows > 0)
            sm90::bulk_copy(dst, a.kv_mxfp4 + row0 * kMxRowBytes, static_cast<uint32_t>(rows * kMxRowBytes),
                            &full[slot], policy);
          if (inside) {
            if (span > 0)
              sm90::bulk_copy(scales, a.kv_mxfp4_scale + start, static_cast<uint32_t>(span), &full[slot], policy);
          } else {
            for (int box = 0; box < boxes; ++box)
              sm90::tma_load_1d(scales + box * kMxScaleBoxBytes, map,
                                static_cast<int32_t>(start + box * kMxScaleBoxBytes), &full[slot], policy);
          }
        }
      } else {
        const PartRun run = part_run(key_rows, q, rows, lane);
        const int32_t row = run.row, first_row = run.first_row;
        const int first = run.first, end = run.end;
        const bool mine = run.mine;
        const int skew = mx_scale_skew(first_row);
        const int64_t start = int64_t{first_row} * kMxRowScales - skew;  // a 16-byte multiple
        const int span = mx_scale_span(skew, end - first);
        // The span ends at the 16-byte multiple above the run's last scale byte, so it reads past
        // the scale array's end only where the run ends at the cache's last row and the array's
        // 18 N bytes are no multiple of 16 (N % 8 != 0). It is then copied up to the array's last
        // 16-byte multiple, and the bytes after it by this lane's plain loads.
        const bool tail = first_row + (end - first) == a.cache_rows && a.cache_rows % 8 != 0;
        int copied = span;  // a 16-byte multiple, >= 0
        const bool leads = run.leads;
        unsigned char* room = scales + kMxPagedRowSpan * first;  // the run's spans land here
        if (leads && tail) {
          const int64_t whole_end = a.cache_rows * kMxRowScales / 16 * 16;
          copied = static_cast<int>(whole_end - start);
          for (int i = 0; i < static_cast<int>(a.cache_rows * kMxRowScales - whole_end); ++i)
            room[copied + i] = a.kv_mxfp4_scale[whole_end + i];
        }
        if (lane < kFp8PartRows)  // rows past the keys: 0, a byte of the slot (masked keys)
          reinterpret_cast<uint16_t*>(scales + kMxRowOffsetsAt)[lane] =
              static_cast<uint16_t>(mine ? kMxPagedRowSpan * first + skew + kMxRowScales * (lane - first) : 0);
        const uint32_t bytes =
            __reduce_add_sync(0xFFFFFFFFu, leads ? static_cast<uint32_t>((end - first) * kMxRowBytes + copied) : 0u);
        __syncwarp();  // the offsets and tail bytes stored before the barrier's arrival (release) by lane 0
        if (lane == 0) mma::bulk_barrier_expect(&full[slot], bytes);
        __syncwarp();  // the bytes announced before any copy can land
        if (leads) {
          // A 64-bit offset: row x 288 passes 2^31 from row 7456541 on (a cache of 2.1 GB of codes).
          sm90::bulk_copy(dst + lane * kMxRowBytes, a.kv_mxfp4 + int64_t{row} * kMxRowBytes,
                          static_cast<uint32_t>((end - first) * kMxRowBytes), &full[slot], policy);
          if (copied > 0)
            sm90::bulk_copy(room, a.kv_mxfp4_scale + start, static_cast<uint32_t>(copied), &full[slot], policy);
        }
      }
    }
  }
}

template <bool Chunked>
__device__ void produce_mxfp4(const AttentionArgs& a, const ItemSource<Chunked>& items, const CUtensorMap* map,
                              unsigned char* ring, Barrier* full, Barrier* empty) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const uint64_t policy = sm90::l2_evict_first_policy();  // the cache is read once
  int part = 0;
  for (TokenCursor<true, Chunked> c(a, items); c.more; c.advance(a)) {
    const TokenKeys k = c.w.token(c.i);
    if (a.kv_indices == nullptr)
      produce_mxfp4_tiles<ContiguousTiles>(a, c.w, k, map, ring, full, empty, policy, lane, part);
    else if (PagedTileStarts::apply(a, k))
      produce_mxfp4_tiles<PagedTileStarts>(a, c.w, k, map, ring, full, empty, policy, lane, part);
    else
      produce_mxfp4_tiles<PagedRunTiles>(a, c.w, k, map, ring, full, empty, policy, lane, part);
  }
}

// This thread's codes of boxes First .. First + Count - 1 of an fp8 part: rows g and g + 8 of its
// warp's 16 (g = lane / 4), dims 64 b + 16 t .. 64 b + 16 t + 15 of each box b (t = lane % 4), one
// 16-byte load each.
constexpr int kLoadBatch = 3;  // boxes per batch of loads: batch k + 1 is loaded after box 3 k's products
static_assert(KvTile::kBoxes % kLoadBatch == 0);
// The loads are volatile asm: the compiler keeps them where they are written (plain loads it
// hoisted all to the top, and the codes of 9 boxes beside Oᵀ of 512 dims spilled).
template <int Count>
__device__ __forceinline__ void load_boxes(uint4 (&w)[KvTile::kBoxes][2], int first, const unsigned char* part, int lane) {
  const uint32_t row = static_cast<uint32_t>(__cvta_generic_to_shared(part)) +
                       static_cast<uint32_t>((lane / 4) * kFp8RowBytes + (lane % 4) * 16);
#pragma unroll
  for (int b = first; b < first + Count; ++b)
#pragma unroll
    for (int r = 0; r < 2; ++r)
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(w[b][r].x), "=r"(w[b][r].y), "=r"(w[b][r].z), "=r"(w[b][r].w)
                   : "r"(row + static_cast<uint32_t>(r * 8 * kFp8RowBytes + b * KvTile::kBoxDims))
                   : "memory");
}

// The bf16 pairs of one box of this thread's codes: lo[r][j] holds dims 16 t + 4 j, + 1 of row
// g + 8 r, hi[r][j] dims 16 t + 4 j + 2, + 3. Exact, a NaN code a NaN (gpu/common/operand_decode.h
// e4m3fn_quad_to_bf16_pairs: four instructions a pair through f16). The fast decode before it (a
// byte permute, a shift, a mask and a bf16x2 multiply by 2^120 a pair, exact but for NaN codes,
// which it gave as ±480) needed a NaN probe per word and a fix-up path: about 10.3 instructions a
// word against 8, and 288 more in the tile loop's code.
__device__ __forceinline__ void decode_box(const uint4 (&w)[2], uint32_t (&lo)[2][4], uint32_t (&hi)[2][4]) {
  const uint32_t words[2][4] = {{w[0].x, w[0].y, w[0].z, w[0].w}, {w[1].x, w[1].y, w[1].z, w[1].w}};
#pragma unroll
  for (int r = 0; r < 2; ++r)
#pragma unroll
    for (int j = 0; j < 4; ++j) common::e4m3fn_quad_to_bf16_pairs(words[r][j], lo[r][j], hi[r][j]);
}

// The f16 pairs of one box of this thread's codes (the all-fp8 recipes), in decode_box's order:
// one conversion per pair (gpu/common/operand_decode.h e4m3fn_pair_to_f16_pair, exact, a NaN code a
// NaN), so no probe and no fix-up.
__device__ __forceinline__ void decode_box_f16(const uint4 (&w)[2], uint32_t (&lo)[2][4], uint32_t (&hi)[2][4]) {
  const uint32_t words[2][4] = {{w[0].x, w[0].y, w[0].z, w[0].w}, {w[1].x, w[1].y, w[1].z, w[1].w}};
#pragma unroll
  for (int r = 0; r < 2; ++r)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      lo[r][j] = common::e4m3fn_pair_to_f16_pair(words[r][j] & 0xFFFFu);
      hi[r][j] = common::e4m3fn_pair_to_f16_pair(words[r][j] >> 16);
    }
}

// How qk_decoded reads the rows of a part: Codes, this thread's share of the part; kOperand, the
// products' operand type; kF16Values, whether the value tile holds V rounded to f16 (a4w4) rather
// than the decoded pairs; load<Count> (boxes first .. first + Count - 1 into Codes); decode (one
// box's operand pairs, lo[r][j] holding dims 16 t + 4 j, + 1 of row g + 8 r and hi[r][j] dims
// 16 t + 4 j + 2, + 3). fp8: load_boxes, then decode_box (bf16, a16w8) or decode_box_f16 (f16, the
// all-fp8 recipes).
template <sm90::WgOperand Operand>
struct Fp8Rows {
  static constexpr sm90::WgOperand kOperand = Operand;
  static constexpr bool kF16Values = false;
  // The owner's previous P·V is left running into qk_decoded, which waits for it before its first
  // value store (its tail overlaps the part's wait and the first loads): a8w8 451.8 -> 441.3 µs at
  // 256 x 8192, 130.3 -> 127.8 at 64 x 8192, a16w8 within 0.5 %; the MXFP4 kernels' registers came
  // out worse with it (a16w4 666 -> 752 µs), so they wait at once (device run 2 of 2026-12-03's
  // third session).
  static constexpr bool kPvWaitedInQk = true;
  using Codes = uint4[KvTile::kBoxes][2];
  template <int Count>
  __device__ __forceinline__ static void load(Codes& codes, int first, const unsigned char* part, int, int lane) {
    load_boxes<Count>(codes, first, part, lane);
  }
  __device__ __forceinline__ static void decode(const Codes& codes, int b, uint32_t (&lo)[2][4], uint32_t (&hi)[2][4]) {
    if constexpr (Operand == sm90::WgOperand::f16) decode_box_f16(codes[b], lo, hi);
    else decode_box(codes[b], lo, hi);
  }
  // An OR of the words of boxes past `done` (qk_decoded's release: reading it waits for their loads).
  __device__ __forceinline__ static uint32_t pending(const Codes& codes, int done) {
    uint32_t any = 0;
#pragma unroll
    for (int b = 0; b < KvTile::kBoxes; ++b)
#pragma unroll
      for (int r = 0; r < 2; ++r)
        if (b > done) any |= codes[b][r].x | codes[b][r].y | codes[b][r].z | codes[b][r].w;
    return any;
  }
};

// MXFP4: this thread's codes of rows g and g + 8 of its warp's 16 (g = lane / 4), dims 64 b + 16 t
// .. 64 b + 16 t + 15 of each box b (t = lane % 4: 8 code bytes, one load each), and the one scale
// byte of each (the 16 dims lie in block 2 b + t / 2). The loads are volatile asm, as load_boxes',
// so that they stay in their batches. 8-byte loads of rows 288 bytes apart: a half-warp's four rows
// x 32 bytes meet every bank once. F16V (a4w4): the value tile holds V rounded to f16 (qk_decoded).
template <bool F16V>
struct Mxfp4Rows {
  static constexpr sm90::WgOperand kOperand = sm90::WgOperand::bf16;
  static constexpr bool kF16Values = F16V;
  static constexpr bool kPvWaitedInQk = false;  // Fp8Rows::kPvWaitedInQk
  struct Codes {
    uint2 codes[KvTile::kBoxes][2];
    uint32_t scales[KvTile::kBoxes][2];
  };
  template <int Count>
  // skew: the contiguous part's (mx_scale_skew), or -1 for a paged part (each row's stored in the slot).
  __device__ __forceinline__ static void load(Codes& c, int first, const unsigned char* part, int skew, int lane) {
    const int g = lane / 4, t = lane % 4;
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(part));
    const uint32_t row = base + static_cast<uint32_t>(g * kMxRowBytes + t * 8);
    // The scale slot: a contiguous part's rows 18 bytes apart from its skew on, a paged part's each
    // at the offset the producer stored for it (produce_mxfp4).
    const uint32_t slot = base + kMxCodeBytes;
    uint32_t scale_at[2];
    if (skew >= 0) {
      scale_at[0] = slot + static_cast<uint32_t>(skew + g * kMxRowScales);
      scale_at[1] = scale_at[0] + 8 * kMxRowScales;
    } else {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        uint32_t offset;
        asm volatile("ld.shared.u16 %0, [%1];\n"
                     : "=r"(offset)
                     : "r"(slot + static_cast<uint32_t>(kMxRowOffsetsAt + 2 * (g + 8 * r)))
                     : "memory");
        scale_at[r] = slot + offset;
      }
    }
#pragma unroll
    for (int b = first; b < first + Count; ++b)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                     : "=r"(c.codes[b][r].x), "=r"(c.codes[b][r].y)
                     : "r"(row + static_cast<uint32_t>(r * 8 * kMxRowBytes + b * KvTile::kBoxDims / 2))
                     : "memory");
        asm volatile("ld.shared.u8 %0, [%1];\n"
                     : "=r"(c.scales[b][r])
                     : "r"(scale_at[r] + static_cast<uint32_t>(2 * b + t / 2))
                     : "memory");
      }
  }
  // lo[r][j] from code byte 2 j of the row's 8, hi[r][j] from byte 2 j + 1: the table lookups of
  // gpu/common/operand_decode.h, exact for every scale, so no branch: a pair-decode path for scales
  // 0 and 255, even as a loop, kept a16w4's tile loop at 3916 instructions (63 KB), a quarter of its
  // stall samples at 64 x 8192 waiting for an instruction fetch (device run 2 of 2026-12-02's sixth
  // session; without it 2187 instructions and 705 -> 640 µs at 256 x 8192, run 3). (a4w4 kept that
  // path while it was faster there, with other registers; with its f16 P·V, without it: 638.5 ->
  // 548.0 µs at 256 x 8192, device run 1 of 2026-12-03's seventh session.)
  __device__ __forceinline__ static void decode(const Codes& c, int b, uint32_t (&lo)[2][4], uint32_t (&hi)[2][4]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      uint32_t first[4], second[4];
      common::mxfp4_octet_to_bf16_pairs(c.codes[b][r].x, c.scales[b][r], first);
      common::mxfp4_octet_to_bf16_pairs(c.codes[b][r].y, c.scales[b][r], second);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        lo[r][j] = first[2 * j];
        hi[r][j] = first[2 * j + 1];
        lo[r][j + 2] = second[2 * j];
        hi[r][j + 2] = second[2 * j + 1];
      }
    }
  }
  // An OR of the codes and scales of boxes past `done` (qk_decoded's release).
  __device__ __forceinline__ static uint32_t pending(const Codes& c, int done) {
    uint32_t any = 0;
#pragma unroll
    for (int b = 0; b < KvTile::kBoxes; ++b)
#pragma unroll
      for (int r = 0; r < 2; ++r)
        if (b > done) any |= c.codes[b][r].x | c.codes[b][r].y | c.scales[b][r];
    return any;
  }
};

// Sᵀ = K Qᵀ of an fp8 or MXFP4 tile, K from this thread's decoded codes (`rows`: Fp8Rows, Mxfp4Rows)
// as wgmma's register A operand, box by box (issued, committed and waited); on the way the value boxes are stored as the bf16 value
// tile `vtile` (rows n .. 63 as zeros). K step j of box b reads, in the fragment's columns 2 t, + 1
// and 2 t + 8, + 9, the dims 64 b + 16 t + 4 j, + 1 and + 2, + 3: Q is staged in that order
// (stage_q_fp8). Two register sets: box b's decode waits until box b - 2's products are done.
// The part: this warp's 16 rows of the tile, released (`empty`) as soon as its codes are all in
// registers. The codes are loaded in batches of kLoadBatch boxes, the next batch once the first box
// of the last one is issued: all 18 loads at once did not fit in the registers beside Oᵀ of 512
// dims.
template <class Rows>
__device__ __forceinline__ void qk_decoded(Acc& s, const unsigned char* part, int aux, Barrier* empty,
                                           const unsigned char* sq, unsigned char* vtile, int n, int warp, int lane,
                                           uint32_t drain) {
  typename Rows::Codes codes;
  Rows::template load<kLoadBatch>(codes, 0, part, aux, lane);
  // Rows::kPvWaitedInQk: this warpgroup's P·V of its previous tile, issued and not waited by the
  // caller, reads the value tile the decode below rewrites: done before the first store. The caller
  // pins Oᵀ after this returns. (A group per value chunk, each box waiting for its chunk alone, made
  // ptxas serialize the products (C7514: accumulators read inside a pipeline stage).)
  if constexpr (Rows::kPvWaitedInQk) sm90::wgmma_wait<0>();
  const uint64_t q_desc = sm90::smem_descriptor_sw128(sq, QTile::kKMajorLeading, QTile::kStride);
  const int row0 = warp * kFp8PartRows + lane / 4;  // tile rows row0 and row0 + 8
  // Two accumulators, for the even (s itself) and the odd K steps of a box: consecutive products
  // are independent of each other. (Four, one per K step, spilled at 232 registers.)
  Acc odd;
  Acc* chain[2] = {&s, &odd};
  sm90::WgFragA64x16 frag[2][4];  // [register set][K step of the box]
  // stmatrix_fragment's row of this lane in box 0 for each K step j: matrix lane / 8 of the
  // fragment (rows + 8 for odd matrices, columns 8..15 for matrices 2 and 3) into chunk 2 j + its
  // column half of the row.
  uint32_t value_rows[4];
  {
    const int matrix = lane / 8;
    const int row = warp * kFp8PartRows + (matrix % 2) * 8 + lane % 8;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      value_rows[j] = static_cast<uint32_t>(__cvta_generic_to_shared(vtile)) +
                      static_cast<uint32_t>(KvTile::chunk_offset_bytes(row, 2 * j + matrix / 2));
  }
#pragma unroll
  for (int b = 0; b < KvTile::kBoxes; ++b) {
    sm90::WgFragA64x16(&f)[4] = frag[b % 2];
    if (b >= 2) {
      sm90::wgmma_wait<1>();  // box b - 2's products, which read this set, are done
#pragma unroll
      for (int j = 0; j < 4; ++j) sm90::wgmma_fence_fragment(f[j]);
    }
    uint32_t lo[2][4], hi[2][4];
    Rows::decode(codes, b, lo, hi);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      f[j].x[0] = lo[0][j];
      f[j].x[1] = lo[1][j];
      f[j].x[2] = hi[0][j];
      f[j].x[3] = hi[1][j];
    }
    // The tile's last keys: rows past them as zeros, for P·V (a row of another request or a
    // NaN-poisoned unused page times P = 0 would still be NaN) and for Q·Kᵀ alike (their scores are
    // masked). n is the warpgroup's: a uniform branch, taken in a split's last tile only.
    if (n < kTileKeys) {
      const bool key0 = row0 < n, key1 = row0 + 8 < n;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        f[j].x[0] = key0 ? f[j].x[0] : 0u;
        f[j].x[2] = key0 ? f[j].x[2] : 0u;
        f[j].x[1] = key1 ? f[j].x[1] : 0u;
        f[j].x[3] = key1 ? f[j].x[3] : 0u;
      }
    }
    if (b < kValueBoxes) {
      // The value box: each fragment stored whole (stmatrix_fragment), so the box holds its dims in
      // the fragments' column order (decoded_box_dim), which P·V carries into Oᵀ's rows and the
      // epilogue undoes. (Stored as rows of 16 consecutive dims, each word had to be moved or
      // selected into place: 128 selects a tile.)
      // a4w4 (Rows::kF16Values): V rounded to f16, P·V's operand type (exact for scales 104..140).
      if constexpr (Rows::kF16Values) {
        sm90::WgFragA64x16 halves[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int k = 0; k < 4; ++k) halves[j].x[k] = common::bf16_pair_to_f16_pair(f[j].x[k]);
#pragma unroll
        for (int j = 0; j < 4; ++j) sm90::stmatrix_fragment(value_rows[j] + b * KvTile::kBoxBytes, halves[j]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) sm90::stmatrix_fragment(value_rows[j] + b * KvTile::kBoxBytes, f[j]);
      }
    }
#pragma unroll
    for (int c = 0; c < 2; ++c) sm90::wgmma_fence_operand(*chain[c]);
    sm90::wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j)
      sm90::wgmma_m64n16k16_rs<Rows::kOperand>(
          *chain[j % 2], f[j],
          sm90::descriptor_advance(q_desc, QTile::k_major_start(b * KvTile::kBoxDims + j * sm90::kWgK16)),
          b > 0 || j >= 2);
    sm90::wgmma_commit();
    if (b % kLoadBatch == 0 && b + kLoadBatch < KvTile::kBoxes) {
      Rows::template load<kLoadBatch>(codes, b + kLoadBatch, part, aux, lane);
      if (b + 2 * kLoadBatch >= KvTile::kBoxes) {  // the last batch: the part is free
        // Every lane's loads done before the release: a load issued is not yet a load performed,
        // and the copy engine's next write into the part (the async proxy) is not ordered after
        // it by the barrier's release and acquire, which order generic-proxy accesses. So each
        // lane stores an OR of its words not yet used (boxes past b) to its warp's `drain` word,
        // a store that cannot issue before those loads have returned. Without it the decoded
        // kernels failed verify at random whenever their timing changed (device runs 3 to 7 of
        // 2026-12-02's sixth session: a16w8 and a4w4 split-k, wrong values in the dims of the
        // last boxes loaded).
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(drain), "r"(Rows::pending(codes, b)) : "memory");
        __syncwarp();  // every lane's loads before the release
        if (lane == 0) mma::bulk_barrier_arrive(empty);
        __syncwarp();
      }
    }
  }
  sm90::wgmma_wait<0>();
#pragma unroll
  for (int set = 0; set < 2; ++set)
#pragma unroll
    for (int j = 0; j < 4; ++j) sm90::wgmma_fence_fragment(frag[set][j]);
#pragma unroll
  for (int c = 0; c < 2; ++c) sm90::wgmma_fence_operand(*chain[c]);
#pragma unroll
  for (int l = 0; l < Acc::ne; ++l) s.x[l] += odd.x[l];
}

// The dim at position p (0..63) of a 64-dim box in qk_decoded's column order: K step j = p / 16,
// column κ = p % 16 of its A fragment holds dim 16 (κ % 8 / 2) + 4 j + 2 (κ / 8) + κ % 2, so each
// column pair is a pair of adjacent dims. Q is staged in it (decoded_dim) and the value tile is
// stored in it (qk_decoded), so Oᵀ's row p of a value chunk is that chunk's dim decoded_box_dim(p).
__device__ __forceinline__ int decoded_box_dim(int p) {
  const int j = p / sm90::kWgK16, col = p % sm90::kWgK16;
  return 16 * (col % 8 / 2) + 4 * j + 2 * (col / 8) + col % 2;
}
// The dim that qk_decoded's products read at position `slot` of Q's K-major row.
__device__ __forceinline__ int decoded_dim(int slot) {
  return slot / KvTile::kBoxDims * KvTile::kBoxDims + decoded_box_dim(slot % KvTile::kBoxDims);
}

// Q of `token` into QTile layout for qk_decoded, in decoded_dim's order.
// 4-byte asynchronous copies, all in flight at once (a load and a store per pair kept one global
// latency per pair: about 20 µs per token at 4 x 1024 in device run 1; the loads batched in
// registers spilled); the caller waits for them (copy_commit_and_wait_all).
__device__ __forceinline__ void stage_q_fp8(const AttentionArgs& a, int64_t token, unsigned char* sq, int tid) {
  constexpr int kPairsPerHead = kQkDim / 2;
  for (int idx = tid; idx < kNumHeads * kPairsPerHead; idx += kConsumerThreads) {
    const int h = idx / kPairsPerHead;
    const int slot = 2 * (idx % kPairsPerHead);  // the dim position the products read
    const int dim = decoded_dim(slot);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(static_cast<uint32_t>(
                     __cvta_generic_to_shared(sq + QTile::chunk_offset_bytes(h, slot / 8) + (slot % 8) * 2))),
                 "l"(a.q_bf16 + (token * kNumHeads + h) * kQkDim + dim));
  }
}

// Q of `token` as stage_q_fp8 places it, from the MXFP4 codes and block scales the Q quantization
// wrote (a4w4), each pair decoded to bf16 exactly (mxfp4_pair_to_bf16_pair, the reference's
// values). The token's 16 rows of codes (4608 bytes) and of scales (288) are contiguous and
// 16-byte aligned (the workspace's regions are): 16-byte asynchronous copies into `staging` (free
// shared memory: a value tile between tokens), all in flight at once, then a consumer barrier and
// the decode from shared memory, 16 threads per head. (Each thread's 36 bytes loaded into registers
// first, then decoded, spilled 464 bytes beside the consumers' state; a load per pair would take a
// global latency per pair.)
__device__ __forceinline__ void stage_q_mxfp4(const AttentionArgs& a, int64_t token, unsigned char* staging,
                                              unsigned char* sq, int tid) {
  constexpr int kCodeBytes = kNumHeads * kMxRowBytes;      // 4608
  constexpr int kScaleBytes = kNumHeads * kMxRowScales;    // 288
  static_assert(kCodeBytes % 16 == 0 && kScaleBytes % 16 == 0);
  const uint8_t* codes = a.q_mxfp4 + token * kCodeBytes;
  const uint8_t* scales = a.q_mxfp4_scale + token * kScaleBytes;
  for (int c = tid; c < (kCodeBytes + kScaleBytes) / 16; c += kConsumerThreads)
    copy_16(staging + 16 * c, c < kCodeBytes / 16 ? codes + 16 * c : scales + 16 * c - kCodeBytes);
  copy_commit_and_wait_all();
  consumer_sync();
  constexpr int kPairsPerHead = kQkDim / 2;
  constexpr int kThreadsPerHead = kConsumerThreads / kNumHeads;
  static_assert(kThreadsPerHead * kNumHeads == kConsumerThreads && kPairsPerHead % kThreadsPerHead == 0);
  const int h = tid / kThreadsPerHead;
#pragma unroll 1
  for (int slot = 2 * (tid % kThreadsPerHead); slot < kQkDim; slot += 2 * kThreadsPerHead) {
    const int dim = decoded_dim(slot);
    *reinterpret_cast<uint32_t*>(sq + QTile::chunk_offset_bytes(h, slot / 8) + (slot % 8) * 2) =
        common::mxfp4_pair_to_bf16_pair(staging[h * kMxRowBytes + dim / 2],
                                        staging[kCodeBytes + h * kMxRowScales + dim / problem::kMxfp4Block]);
  }
}

// Q of `token` as stage_q_fp8 places it, from the fp8 codes the Q quantization wrote (the all-fp8
// recipes), each pair converted to f16 exactly as K's are (e4m3fn_pair_to_f16_pair). The token's 16
// rows of codes (9216 bytes) are contiguous and 16-byte aligned (the workspace's regions are):
// 16-byte asynchronous copies into `staging` (a value tile, free between tokens), all in flight at
// once, then a consumer barrier and the conversion from shared memory, as stage_q_mxfp4 does.
__device__ __forceinline__ void stage_q_fp8_codes(const AttentionArgs& a, int64_t token, unsigned char* staging,
                                                  unsigned char* sq, int tid) {
  constexpr int kCodeBytes = kNumHeads * kQkDim;  // 9216
  static_assert(kCodeBytes % 16 == 0 && kCodeBytes <= kFp8ValueBytes);
  const uint8_t* codes = a.q_fp8 + token * kCodeBytes;
  for (int c = tid; c < kCodeBytes / 16; c += kConsumerThreads) copy_16(staging + 16 * c, codes + 16 * c);
  copy_commit_and_wait_all();
  consumer_sync();
  constexpr int kPairsPerHead = kQkDim / 2;
#pragma unroll 4
  for (int idx = tid; idx < kNumHeads * kPairsPerHead; idx += kConsumerThreads) {
    const int h = idx / kPairsPerHead;
    const int slot = 2 * (idx % kPairsPerHead);
    const uint32_t two = *reinterpret_cast<const uint16_t*>(staging + h * kQkDim + decoded_dim(slot));
    *reinterpret_cast<uint32_t*>(sq + QTile::chunk_offset_bytes(h, slot / 8) + (slot % 8) * 2) =
        common::e4m3fn_pair_to_f16_pair(two);
  }
}

// Chunked: the persistent schedule's item queue (ItemSource), else a block per item. Fused (split-K,
// bf16): the a.num_splits blocks of a request form a thread-block cluster and merge their partials
// from L2 in it (gpu/sm90/cluster_merge.h), writing out and lse; no merge kernel follows.
template <problem::KvFormat Kv, problem::PFormat P, problem::SoftmaxBase Base, bool Chunked, bool Fused, int Pack>
__global__ void __launch_bounds__(kThreads<Kv, Pack>, 1)
    hopper_attention_kernel(AttentionArgs a, const __grid_constant__ KvMaps kv_maps) {
  static_assert((P == problem::PFormat::bf16 && Base == problem::SoftmaxBase::e) ||
                    (Kv == problem::KvFormat::fp8 && P == problem::PFormat::fp8 && Base == problem::SoftmaxBase::e) ||
                    (Kv == problem::KvFormat::mxfp4 && P == problem::PFormat::f16 && Base == problem::SoftmaxBase::two),
                "bf16, fp8 or MXFP4 KV with bf16 P, fp8 KV with fp8 P, base e; MXFP4 KV with f16 P, base 2 "
                "(instances.h)");
  static_assert(!Fused || (Kv == problem::KvFormat::bf16 && !Chunked), "the merge in a cluster: bf16 split-K");
  static_assert(Pack == 1 || (Kv == problem::KvFormat::bf16 && Pack <= kMaxPack),
                "tokens packed: bf16 (the decoded kernels' Oᵀ of 512 dims fills their registers)");
  constexpr bool kMxfp4 = Kv == problem::KvFormat::mxfp4;
  // a4w4: f16 P, base 2, V rounded to f16 (P·V on f16 operands), and Q the MXFP4 codes of the Q
  // quantization (the one instance with f16 P, instances.h).
  constexpr bool kF16P = P == problem::PFormat::f16;
  constexpr bool kBase2 = Base == problem::SoftmaxBase::two;
  // The decoded path: fp8 and MXFP4 rows alike (MXFP4 differs in its producer and its rows only).
  constexpr bool kFp8 = Kv == problem::KvFormat::fp8 || kMxfp4;
  // The all-fp8 recipes (a8w8*): Q, K, V and P are fp8 values, so f16 values; the products run on
  // f16 operands, each pair converted in one instruction (decode_box_f16, stage_q_fp8_codes).
  constexpr bool kF16Operands = Kv == problem::KvFormat::fp8 && P == problem::PFormat::fp8;
  constexpr sm90::WgOperand kOperand = kF16Operands ? sm90::WgOperand::f16 : sm90::WgOperand::bf16;
  using DecodedRows = std::conditional_t<kMxfp4, Mxfp4Rows<kF16P>, Fp8Rows<kOperand>>;
  // P·V's operands: f16 for the all-fp8 recipes and a4w4 (f16 P, V rounded to f16), else bf16.
  constexpr sm90::WgOperand kPvOperand = kF16P ? sm90::WgOperand::f16 : kOperand;
  constexpr int kRingParts = kMxfp4 ? kMxfp4RingParts : kFp8RingParts;
  constexpr SharedPlan plan = kPlan<Kv, Fused, Pack>;
  extern __shared__ uint4 shared_words[];
  // The swizzled tiles need a 1024-byte-aligned base (kAlignSlack).
  auto* raw = reinterpret_cast<unsigned char*>(shared_words);
  const uint32_t misalign = static_cast<uint32_t>(__cvta_generic_to_shared(raw)) % KvTile::kAtomBytes;
  unsigned char* smem = raw + (misalign == 0 ? 0 : KvTile::kAtomBytes - misalign);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize;
  auto* full = reinterpret_cast<Barrier*>(smem + plan.bars);
  Barrier* empty = full + plan.full_barriers;
  ItemSource<Chunked> items;
  items.full = empty + plan.empty_barriers;
  // The copy engine's descriptors of the cache (bf16 rows, MXFP4 scales) fetched at once by the
  // producer warp: from the producer's own start the first bulk tensor copy waited about 1600
  // cycles for its descriptor, after the L2 flush between calls (device run 4 of 2026-12-03: the
  // tile's copies issued 3300 cycles after a block's entry, Q staged at 3000).
  if (tid >= kConsumerThreads && tid < kConsumerThreads + kWarpSize) {
    if constexpr (Kv == problem::KvFormat::bf16) {
      const bool paged = a.kv_indices != nullptr;
      if (lane < (paged ? kRunMaps : 1)) sm90::tma_prefetch_map(&kv_maps.rows[paged ? lane : kRunMaps - 1]);
    } else if constexpr (Kv == problem::KvFormat::mxfp4) {
      if (lane == 0) sm90::tma_prefetch_map(&kv_maps.scales);
    }
  }

  if (tid == 0) {
    for (int s = 0; s < plan.full_barriers; ++s) mma::bulk_barrier_init(&full[s], 1);
    // bf16: one arrival per consumer warp (both products read a stage); fp8: the one owner warp
    // that reads a part.
    for (int s = 0; s < plan.empty_barriers; ++s) mma::bulk_barrier_init(&empty[s], kFp8 ? 1 : kConsumerWarps);
    for (int s = 0; s < kItemSlots; ++s) {
      mma::bulk_barrier_init(&items.full[s], 1);
      mma::bulk_barrier_init(&items.empty()[s], kConsumerWarps);
    }
    // Fused: one arrival per block of the cluster on each (thread 0's, after its block's barrier).
    if constexpr (Fused)
      for (int s = 0; s < kClusterBarriers; ++s)
        mma::bulk_barrier_init(reinterpret_cast<Barrier*>(smem + plan.cluster_bars) + s, a.num_splits);
  }
  // The only barrier of the whole block (Fused: of the cluster, so that no peer arrives on a barrier
  // before its block initialised it): the mbarriers are initialised.
  if constexpr (Fused) sm90::cluster_sync();
  else common::block_sync();
  // The consumers' registers moved from the producer warpgroup (kThreads).
  constexpr bool kMovedRegisters = kFp8 || Pack > 1;
  if (tid >= kConsumerThreads) {
    if constexpr (kMovedRegisters && !kFp8) {
      asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegisters));
      if (tid < kConsumerThreads + kWarpSize) produce<Chunked, Pack>(a, items, kv_maps, smem + plan.stage, full, empty);
    } else if constexpr (kFp8) {
      asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegisters));
      if constexpr (kMxfp4) {
        if (tid < kConsumerThreads + kWarpSize) produce_mxfp4(a, items, &kv_maps.scales, smem + plan.stage, full, empty);
      } else {
        if (tid < kConsumerThreads + kWarpSize) produce_fp8(a, items, smem + plan.stage, full, empty);
      }
    } else {
      produce<Chunked, Pack>(a, items, kv_maps, smem + plan.stage, full, empty);
    }
    return;
  }
  if constexpr (kMovedRegisters) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kConsumerRegisters));

  // The warpgroup. The decoded kernels broadcast it from lane 0, so that the compiler knows it
  // uniform across the warp: their value tile's and P's shared addresses depend on it, and computed
  // from tid / 128 each P·V product's two descriptors were built in vector registers and moved to
  // uniform ones (R2UR), about 8 instructions a product, 18 % of the a8w8 kernel's stall samples
  // (device run 2 of 2026-12-03's fourth session). The bf16 kernel keeps tid / 128
  // (rescale_outputs' comment).
  const int wg = kFp8 ? __shfl_sync(0xFFFFFFFFu, tid / sm90::kWarpgroupThreads, 0) : tid / sm90::kWarpgroupThreads;
  const int other = 1 - wg;
  const int wg_tid = tid % sm90::kWarpgroupThreads;
  const int wg_warp = wg_tid / kWarpSize;
  unsigned char* sq = smem + plan.q;
  // P, the published statistics and the reductions: [warpgroup][token of the group]; token p's at
  // + p times one token's bytes.
  unsigned char* own_p = smem + plan.p + wg * Pack * kPBytes;
  const unsigned char* other_p = smem + plan.p + other * Pack * kPBytes;
  unsigned char* own_v = smem + plan.value + wg * kFp8ValueBytes;  // fp8 only
  // fp8 only: this warp's scratch word (qk_decoded's release)
  const uint32_t drain = static_cast<uint32_t>(__cvta_generic_to_shared(smem + plan.drain)) + 4 * (tid / kWarpSize);
  const unsigned char* other_v = smem + plan.value + other * kFp8ValueBytes;
  float* own_pub = reinterpret_cast<float*>(smem + plan.pub + wg * Pack * kPubBytes);
  const float* other_pub = reinterpret_cast<const float*>(smem + plan.pub + other * Pack * kPubBytes);
  constexpr int kPubFloats = kPubBytes / 4;
  // Warpgroup g's per-warp partial maxima, then its per-warp partial sums ([kWarps][16] each).
  auto red_max_of = [&](int g) { return reinterpret_cast<float*>(smem + plan.red + g * Pack * kRedBytes); };
  auto red_sum_of = [&](int g) { return red_max_of(g) + kWarps * kNumHeads; };
  float* red_max = red_max_of(wg);
  float* red_sum = red_sum_of(wg);
  static_assert(kWarpgroups == 2, "tiles alternate between two warpgroups");
  // P [key][head] (heads contiguous) as Oᵀ's B operand read MN-major: a thread's two adjacent heads
  // of a key are one 32-bit store.
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};
  // P of a packed group: token p's heads in columns 16 p .. (Pack == 1: kPLayout).
  constexpr sm90::MnMajorLayout kPLayoutN{kNumHeads * Pack};
  // fp8: the scores carry the Q scale (a scaled fp8 Q) and then the KV scale, one rounding each
  // (gpu/fast/attention.hip's order).
  float score_scale = a.score_scale;
  if (kF16Operands && a.q_scale != nullptr) score_scale *= *a.q_scale;
  if (kFp8 && a.kv_scaled) score_scale *= a.kv_scale;
  // This thread's four heads (accumulator columns), as head_slot numbers them.
  int my_head[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) my_head[c] = 8 * (c / 2) + 2 * (lane % 4) + c % 2;

  int iter = 0;  // tiles consumed so far: the ring's stage and phase, as the producer counts them
  int tokens_done = 0;  // Fused: the cluster barriers' phase
  Barrier* cluster_bars = reinterpret_cast<Barrier*>(smem + plan.cluster_bars);
  auto* scratch = reinterpret_cast<sm90::ClusterMergeScratch*>(smem + plan.scratch);
  for (TokenCursor<false, Chunked, Pack> c(a, items); c.more; c.advance(a)) {
    const WorkItem& w = c.w;
    // The group's tokens i0 .. i0 + group - 1 of the request (query rows token0 ..): its tiles are
    // the union of their keys (each tile copied once), each token's own keys its mask.
    const int64_t i0 = c.i;
    const int group = Pack == 1 ? 1 : c.group();
    const int64_t part_base = w.part_base;
    const int64_t token0 = a.qo_indptr[w.b] + i0;
    const TokenKeys keys = c.keys();
    // Token p's own keys: the group's last token's are the union (computed apart for one token,
    // they cost the one-token kernels 11 registers and the fused one a spill, ptxas -v).
    TokenKeys token_keys[Pack];
#pragma unroll
    for (int p = 0; p + 1 < Pack; ++p) token_keys[p] = w.token(i0 + p);
    auto keys_of = [&](int p) -> const TokenKeys& {
      return p >= group - 1 || MLACHECK_MUTANT(a, packed_token_mask) ? keys : token_keys[p];  // gpu/mutants.h
    };

    // Q of the token (the previous token's products are done: the barrier that ended it).
    if constexpr (kFp8) {
      if constexpr (kF16P) {
        stage_q_mxfp4(a, token0, smem + plan.value, sq, tid);
      } else if constexpr (kF16Operands) {
        stage_q_fp8_codes(a, token0, smem + plan.value, sq, tid);
      } else {
        stage_q_fp8(a, token0, sq, tid);
      }
    } else {
      // Each token of the group into its own Q tile; a group of fewer than Pack tokens repeats its
      // last one in the slots past it (their products run and are dropped: issue_qk_packed).
      for (int idx = tid; idx < Pack * kNumHeads * KvTile::kBoxes * 8; idx += kConsumerThreads) {
        const int slot = idx / (kNumHeads * KvTile::kBoxes * 8), rest = idx % (kNumHeads * KvTile::kBoxes * 8);
        const int tok = slot < group ? slot : group - 1;
        const int h = rest / (KvTile::kBoxes * 8), chunk = rest % (KvTile::kBoxes * 8);
        copy_16(sq + PackedQTile<Pack>::chunk_offset_bytes(slot * kNumHeads + h, chunk),
                a.q_bf16 + ((token0 + tok) * kNumHeads + h) * kQkDim + chunk * 8);
      }
    }
    copy_commit_and_wait_all();
    fence_to_async();
    consumer_sync();

    // Each token's running max and sum of this thread's four heads.
    float m_run_all[Pack][4], l_run_all[Pack][4];
#pragma unroll
    for (int p = 0; p < Pack; ++p)
#pragma unroll
      for (int c = 0; c < 4; ++c) m_run_all[p][c] = kNegInf, l_run_all[p][c] = 0.0f;
    // bf16: Oᵀ of this warpgroup's value dims, every tile. fp8: Oᵀ of every value dim, this
    // warpgroup's tiles only (each tile's P·V by its owner; both rescale by every tile's α), the
    // two partials added at the end of the token.
    constexpr int kOChunks = kFp8 ? kVDim / sm90::kWgM : kVChunks;
    Acc o_all[Pack][kOChunks];
#pragma unroll
    for (int p = 0; p < Pack; ++p)
#pragma unroll
      for (int v = 0; v < kOChunks; ++v)
#pragma unroll
        for (int l = 0; l < Acc::ne; ++l) o_all[p][v].x[l] = 0.0f;

    // Tile t of the token is ring iteration iter + t; warpgroup (iter + t) % 2 owns it.
    // The decoded kernels broadcast the tile counters as wg (so their loops' values are uniform too).
    const int first = kFp8 ? __shfl_sync(0xFFFFFFFFu, iter, 0) : iter;
    const int tiles = kFp8 ? __shfl_sync(0xFFFFFFFFu, keys.tiles, 0) : keys.tiles;
    auto stage_of = [&](int t) { return (first + t) % kStages; };
    auto parity_of = [&](int t) { return static_cast<uint32_t>(((first + t) / kStages) & 1); };
    auto tile_at = [&](int t) { return smem + plan.stage + stage_of(t) * KvTile::kBytes; };
    // After a wgmma_wait<0>: Oᵀ's chunks complete, pinned there (wgmma_fence_operand).
    auto settle_outputs = [&] {
#pragma unroll
      for (int p = 0; p < Pack; ++p)
#pragma unroll
        for (int v = 0; v < kOChunks; ++v) sm90::wgmma_fence_operand(o_all[p][v]);
    };
    auto release = [&](int t) {  // this warp is done with tile t (bf16)
      if (lane == 0) mma::bulk_barrier_arrive(&empty[stage_of(t)]);
      __syncwarp();  // converged for the barriers that follow
    };
    // The softmax step of an owned tile (ref/decode_emulated.h with softmax_tile = kTileKeys) for
    // this thread's four heads: P into own_p, the statistics into own_pub, α out. fp8: the
    // generic-proxy writes of P and of the value tile are fenced for the products before the
    // warpgroup's barrier in the row sums.
    // The one-token kernels' (a packed group's steps are softmax_step_packed's). A generic lambda
    // (`auto& s`): the packed kernels, which never call it, do not instantiate it.
    auto softmax_step = [&](auto& s, int n, float (&alpha)[4]) {
      float(&m_run)[4] = m_run_all[0];
      float(&l_run)[4] = l_run_all[0];
      // Softmax step over the tile's keys for this thread's four heads.
      float m_tile[4] = {kNegInf, kNegInf, kNegInf, kNegInf};
#pragma unroll
      for (int l = 0; l < Acc::ne; ++l) {
        s.x[l] = Acc::get_i(l) < n ? s.x[l] * score_scale : kNegInf;
        m_tile[head_slot(l)] = max_of(m_tile[head_slot(l)], s.x[l]);
      }
      reduce_heads<false>(m_tile, red_max, wg);
      float m_new[4], sum[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        m_new[c] = max_of(m_run[c], m_tile[c]);
        alpha[c] = softmax_exp<kBase2>(m_run[c] - m_new[c]);  // 0 on the first tile
        sum[c] = 0.0f;
      }
      if constexpr (kFp8) {
        // The decoded kernels publish α and m' for the other warpgroup as soon as they are known,
        // before the exps: its softmax step waits for nothing else (l is a per-thread partial).
        if (wg_tid < 4)  // lanes 0..3 of the first warp hold all 16 heads between them
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            own_pub[my_head[c]] = alpha[c];
            own_pub[2 * kNumHeads + my_head[c]] = m_new[c];
          }
        tile_published_arrive(wg);
      }
#pragma unroll
      for (int l = 0; l < Acc::ne; l += 2) {  // elements l, l + 1: one key, adjacent heads
        const float p0 = softmax_exp<kBase2>(s.x[l] - m_new[head_slot(l)]);  // masked: b^-inf = 0
        const float p1 = softmax_exp<kBase2>(s.x[l + 1] - m_new[head_slot(l + 1)]);
        sum[head_slot(l)] += p0;
        sum[head_slot(l + 1)] += p1;
        if constexpr (kF16P) {
          *reinterpret_cast<uint32_t*>(own_p + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
              common::f32_pair_to_f16_pair(p0, p1);
        } else if constexpr (kF16Operands) {  // P rounded to e4m3fn (supports()), as f16 values
          *reinterpret_cast<uint32_t*>(own_p + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
              common::p_pair_to_e4m3fn_f16_pair(p0, p1);
        } else {
          *reinterpret_cast<uint32_t*>(own_p + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
              common::pack_bf16(quant::f32_to_bf16(common::round_to_bf16(p0)),
                                quant::f32_to_bf16(common::round_to_bf16(p1)));
        }
      }
      if constexpr (kFp8) {
        // This thread's own p only: l is reduced over all threads at the token's end. The
        // warpgroup's barrier makes every warp's P (and value stores) visible to its P·V.
        fence_to_async();
        warpgroup_sync(wg);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          l_run[c] = l_run[c] * alpha[c] + sum[c];
          m_run[c] = m_new[c];
        }
        return;
      }
      reduce_heads<true>(sum, red_sum, wg);
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        l_run[c] = l_run[c] * alpha[c] + sum[c];
        m_run[c] = m_new[c];
      }
      if (wg_tid < 4)  // lanes 0..3 of the first warp hold all 16 heads between them
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          own_pub[my_head[c]] = alpha[c];
          own_pub[kNumHeads + my_head[c]] = sum[c];
          own_pub[2 * kNumHeads + my_head[c]] = m_new[c];
        }
      __syncwarp();  // the warp converged again before the barriers that follow
    };

    // The softmax step of every token of a packed group at once (bf16; Pack > 1): softmax_step's
    // float operations per token, in its order, with each reduction of the maxima and of the sums
    // for all tokens behind one barrier of the warpgroup (reduce_heads_packed), where one token at a
    // time took two barriers each. n[p]: token p's keys in the tile.
    auto softmax_step_packed = [&](Acc (&s)[Pack], const int (&n)[Pack], float (&alpha)[Pack][4]) {
      float m_tile[Pack][4], m_new[Pack][4], sum[Pack][4];
#pragma unroll
      for (int p = 0; p < Pack; ++p) {
#pragma unroll
        for (int c = 0; c < 4; ++c) m_tile[p][c] = kNegInf;
#pragma unroll
        for (int l = 0; l < Acc::ne; ++l) {
          s[p].x[l] = Acc::get_i(l) < n[p] ? s[p].x[l] * score_scale : kNegInf;
          m_tile[p][head_slot(l)] = max_of(m_tile[p][head_slot(l)], s[p].x[l]);
        }
      }
      reduce_heads_packed<false, Pack>(m_tile, red_max, wg);
#pragma unroll
      for (int p = 0; p < Pack; ++p)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          m_new[p][c] = max_of(m_run_all[p][c], m_tile[p][c]);
          alpha[p][c] = softmax_exp<kBase2>(m_run_all[p][c] - m_new[p][c]);  // 0 on the first tile
          sum[p][c] = 0.0f;
        }
#pragma unroll
      for (int p = 0; p < Pack; ++p)
#pragma unroll
        for (int l = 0; l < Acc::ne; l += 2) {  // elements l, l + 1: one key, adjacent heads
          const float p0 = softmax_exp<kBase2>(s[p].x[l] - m_new[p][head_slot(l)]);  // masked: b^-inf = 0
          const float p1 = softmax_exp<kBase2>(s[p].x[l + 1] - m_new[p][head_slot(l + 1)]);
          sum[p][head_slot(l)] += p0;
          sum[p][head_slot(l + 1)] += p1;
          *reinterpret_cast<uint32_t*>(own_p + kPLayoutN.offset_bytes(Acc::get_i(l), p * kNumHeads + Acc::get_j(l))) =
              common::pack_bf16(quant::f32_to_bf16(common::round_to_bf16(p0)),
                                quant::f32_to_bf16(common::round_to_bf16(p1)));
        }
      reduce_heads_packed<true, Pack>(sum, red_sum, wg);
#pragma unroll
      for (int p = 0; p < Pack; ++p) {
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          l_run_all[p][c] = l_run_all[p][c] * alpha[p][c] + sum[p][c];
          m_run_all[p][c] = m_new[p][c];
        }
        if (wg_tid < 4)  // lanes 0..3 of the first warp hold all 16 heads between them
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            float* const pub = own_pub + p * kPubFloats;
            pub[my_head[c]] = alpha[p][c];
            pub[kNumHeads + my_head[c]] = sum[p][c];
            pub[2 * kNumHeads + my_head[c]] = m_new[p][c];
          }
      }
      __syncwarp();  // the warp converged again before the barriers that follow
    };

    if constexpr (kFp8) {
      float(&m_run)[4] = m_run_all[0];  // one token at a time (Pack == 1)
      float(&l_run)[4] = l_run_all[0];
      Acc(&o)[kOChunks] = o_all[0];
      // The other warpgroup's tile t: wait for its softmax step, take its statistics (the same
      // float operations as the owner's) and rescale Oᵀ. Its publisher only arrives (it does not
      // wait for this reader): it writes its statistics again two tiles later, after it has taken
      // this warpgroup's next tile, which comes after this read.
      auto take_stats = [&](int t) {
        static_cast<void>(t);
        tile_published(other);
        float alpha[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          alpha[c] = other_pub[my_head[c]];
          l_run[c] *= alpha[c];  // this thread's partial: the other's p are in its own partials
          m_run[c] = other_pub[2 * kNumHeads + my_head[c]];
        }
        rescale_outputs<true>(o, alpha);
      };
      for (int t = (wg - first % 2 + 2) % 2; t < tiles; t += 2) {
        const int n = keys.keys_in(t);
        // This warp's part: its codes into registers, the part released once they are; the decode
        // and Q·Kᵀ, which write this warpgroup's value tile (its own P·V of tile t - 2 done first:
        // waited below, or at qk_decoded's start where DecodedRows::kPvWaitedInQk).
        const int part = (first + t) * kFp8Parts + wg_warp;
        const int slot = ring_slot<kRingParts>(part);
        mma::bulk_barrier_wait(&full[slot], ring_phase<kRingParts>(part));
        Acc s;
        if constexpr (kMxfp4) {
          const int skew = a.kv_indices != nullptr
                               ? -1
                               : mx_scale_skew(w.row0 + keys.first + static_cast<int64_t>(t) * kTileKeys +
                                               wg_warp * kFp8PartRows);
          qk_decoded<DecodedRows>(s, smem + plan.stage + slot * kMxPartBytes, skew, &empty[slot], sq, own_v, n,
                                  wg_warp, lane, drain);
        } else {
          qk_decoded<DecodedRows>(s, smem + plan.stage + slot * kFp8PartBytes, 0, &empty[slot], sq, own_v, n, wg_warp,
                                  lane, drain);
        }
        if constexpr (DecodedRows::kPvWaitedInQk) settle_outputs();  // the previous P·V, waited in qk_decoded
        if (t > 0) take_stats(t - 1);
        float alpha[4];
        softmax_step(s, n, alpha);  // publishes α and m' on the way
        issue_pv<kOChunks, kPvOperand, true>(o, alpha, own_v, own_p, 0);
        if constexpr (!DecodedRows::kPvWaitedInQk) {
          sm90::wgmma_wait<0>();
          settle_outputs();
        }
      }
      if constexpr (DecodedRows::kPvWaitedInQk) {  // the token's last P·V
        sm90::wgmma_wait<0>();
        settle_outputs();
      }
      if (tiles > 0 && (first + tiles - 1) % 2 != wg) take_stats(tiles - 1);
    } else {
      // P·V of a tile for every token of the group (P of N = 16 Pack columns at p_base, token p's
      // from column 16 p): each Oᵀ rescaled by its token's α and fenced before the product.
      auto issue_pv_group = [&](const float (&alpha)[Pack][4], const unsigned char* kv, const unsigned char* p_base) {
        if constexpr (Pack == 1) {
          issue_pv(o_all[0], alpha[0], kv, p_base, wg * kVChunks);
        } else {
#pragma unroll
          for (int p = 0; p < Pack; ++p) rescale_outputs<false>(o_all[p], alpha[p]);
#pragma unroll
          for (int p = 0; p < Pack; ++p)
#pragma unroll
            for (int v = 0; v < kVChunks; ++v) sm90::wgmma_fence_operand(o_all[p][v]);
          sm90::wgmma_fence();
          // Oᵀ += Vᵀ Pᵀ with N = 16 Pack: token p's Oᵀ the columns 16 p .. (two tokens: one m64n32).
          static_assert(Pack == 2, "two tokens: one m64n32 product");
          const uint64_t v_desc = sm90::smem_descriptor_sw128(kv, KvTile::kLeading, KvTile::kStride);
          const uint64_t p_desc = sm90::smem_descriptor(p_base, kPLayoutN.leading_bytes(), kPLayoutN.stride_bytes());
#pragma unroll
          for (int v = 0; v < kVChunks; ++v)
#pragma unroll
            for (int k = 0; k < kPvSteps; ++k) {
              const int k0 = k * sm90::kWgK16;
              sm90::wgmma_m64n32k16<true, true>(
                  o_all[0][v], o_all[1][v],
                  sm90::descriptor_advance(v_desc, KvTile::mn_major_start((wg * kVChunks + v) * sm90::kWgM, k0)),
                  sm90::descriptor_advance(p_desc, kPLayoutN.offset_bytes(k0, 0)), true);
            }
          sm90::wgmma_commit();
        }
      };
      // The other warpgroup's tile t: wait for its softmax step, take its statistics (the same
      // float operations as the owner's), rescale Oᵀ and issue P·V over this warpgroup's dims, for
      // each token of the group.
      auto take_remote = [&](int t) {
        tile_published(other);
        // The copy engine's writes of the value boxes this warpgroup reads, acquired here too (the
        // phase is complete: the owner waited on it, and the stage is not released before this).
        Barrier* bars = full + stage_of(t) * KvTile::kBoxes;
#pragma unroll
        for (int v = 0; v < kVChunks; ++v) mma::bulk_barrier_wait(&bars[wg * kVChunks + v], parity_of(t));
        float alpha[Pack][4];
#pragma unroll
        for (int p = 0; p < Pack; ++p) {
          const float* pub = other_pub + p * kPubFloats;
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            alpha[p][c] = pub[my_head[c]];
            l_run_all[p][c] = l_run_all[p][c] * alpha[p][c] + pub[kNumHeads + my_head[c]];
            m_run_all[p][c] = pub[2 * kNumHeads + my_head[c]];
          }
        }
        issue_pv_group(alpha, tile_at(t), other_p);
      };
      for (int t = (wg - first % 2 + 2) % 2; t < tiles; t += 2) {
        const int stage = stage_of(t);
        unsigned char* kv = tile_at(t);
        const int n = keys.keys_in(t);
        // The other warpgroup's previous tile first: its stage is released as soon as possible
        // (device run 1 of issue 10's overlap branch: Q·Kᵀ issued first, under the other's softmax
        // step, held both stages longer and ran at 801 µs instead of 590 at 256 x 8192).
        if (t > 0) take_remote(t - 1);
        Acc s[Pack];
        if constexpr (Pack == 1) issue_qk(s[0], kv, sq, full + stage * KvTile::kBoxes, parity_of(t));
        else issue_qk_packed<Pack>(s, kv, sq, full + stage * KvTile::kBoxes, parity_of(t));
        // The other's tile t - 1 released as soon as its P·V is done (the older of the two groups
        // in flight), while Q·Kᵀ still runs: at 256 x 8192 566 µs against 568 when released after
        // Q·Kᵀ, 0.3 to 0.6 % on the 8192-key shapes, the rest within noise; waiting for that P·V before
        // issuing Q·Kᵀ drains the tensor pipe on the chain between the warpgroups (590 µs) (docs/PERF.md,
        // device runs 1-2 of 2026-12-04's fifth session).
        if (t > 0) {
          sm90::wgmma_wait<1>();
          settle_outputs();
          release(t - 1);
        }
        sm90::wgmma_wait<0>();
#pragma unroll
        for (int p = 0; p < Pack; ++p) sm90::wgmma_fence_operand(s[p]);
        settle_outputs();
        if (n < kTileKeys) zero_rows_past(kv, n, wg_tid);
        float alpha[Pack][4];
        if constexpr (Pack == 1) {
          softmax_step(s[0], n, alpha[0]);
        } else {
          int token_n[Pack];
#pragma unroll
          for (int p = 0; p < Pack; ++p) token_n[p] = keys_of(p).keys_in(t);
          softmax_step_packed(s, token_n, alpha);
        }
        fence_to_async();
        tile_published(wg);  // P, the zeroed rows and the statistics, for both warpgroups' products
        issue_pv_group(alpha, kv, own_p);
        sm90::wgmma_wait<0>();
        settle_outputs();
        release(t);
      }
      if (tiles > 0 && (first + tiles - 1) % 2 != wg) {
        take_remote(tiles - 1);
        sm90::wgmma_wait<0>();
        settle_outputs();
        release(tiles - 1);
      }
    }
    iter = first + tiles;

    // Each token of the group's output (the same steps one token at a time, in order).
    auto finish_token = [&](auto token_c) {
      constexpr int p = decltype(token_c)::value;
      const int64_t i = i0 + p;
      const int64_t token = token0 + p;
      float(&m_run)[4] = m_run_all[p];
      float(&l_run)[4] = l_run_all[p];
      Acc(&o)[kOChunks] = o_all[p];
      float* stat_l = reinterpret_cast<float*>(smem + plan.stats) + p * 2 * kNumHeads;
      float* stat_m = stat_l + kNumHeads;
      // The split's output: o = fl32(acc / l), lse = fl32(m + ln l); a query with no visible key in
      // the split writes o = 0, lse = -inf.
      const bool empty_split = keys_of(p).tiles == 0;
      // The statistics of warpgroup 0's first warp (every thread holds the same m; bf16: the same l).
      auto write_stats = [&] {
        if (tid < kWarpSize && lane / 4 == 0)
  #pragma unroll
          for (int c = 0; c < 4; ++c) {
            stat_l[my_head[c]] = l_run[c];
            stat_m[my_head[c]] = m_run[c];
          }
      };
      if constexpr (kFp8) {
        // l of each head: this thread's partial summed over the lanes of its heads (lane bits 2..4),
        // then by every thread over both warpgroups' warps in one order (red_sum is free: the decoded
        // kernels' softmax steps keep no sums there), so that all hold the same l.
        reduce_heads_in_warp<true>(l_run);
        if (lane < 4)
  #pragma unroll
          for (int c = 0; c < 4; ++c) red_sum[wg_warp * kNumHeads + my_head[c]] = l_run[c];
      } else {
        write_stats();
      }
      // fp8: warpgroup w writes the value dims of chunks 4 w .. 4 w + 3; it hands its partial of the
      // other chunks to the other warpgroup through its value tile (free: its products are done),
      // float by float in the same fragment order, and adds the other's partial of its own chunks.
      // (Registers are indexed by constants only: the warpgroup picks between o[v] and o[4 + v].)
      Acc out_o[kVChunks];
  #pragma unroll
      for (int v = 0; v < kVChunks; ++v) out_o[v] = o[v];
      if constexpr (kFp8) {
        float* mine = reinterpret_cast<float*>(own_v);
        const float* theirs = reinterpret_cast<const float*>(other_v);
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l)
            mine[(v * Acc::ne + l) * sm90::kWarpgroupThreads + wg_tid] =
                wg == 0 ? o[kOChunks - kVChunks + v].x[l] : o[v].x[l];
        consumer_sync();
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l)
            out_o[v].x[l] = (wg == 0 ? o[v].x[l] : o[kOChunks - kVChunks + v].x[l]) +
                            theirs[(v * Acc::ne + l) * sm90::kWarpgroupThreads + wg_tid];
  #pragma unroll
        for (int c = 0; c < 4; ++c) {
          float l = 0.0f;
  #pragma unroll
          for (int g = 0; g < kWarpgroups; ++g)
  #pragma unroll
            for (int w = 0; w < kWarps; ++w)
              l += red_max_of(g)[(kWarps + w) * kNumHeads + my_head[c]];  // red_sum_of(g)[w][head]
          l_run[c] = l;
        }
        write_stats();
      }
      // fl32(acc / l) of all of this thread's elements at once (gpu/common/exact_quotient.h: one
      // reciprocal per head, no division and no branch per element), unless one lies outside the
      // window where that is exact; fp8: then fl32(· KV scale); an empty split's output is 0.
      if (empty_split) {
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l) out_o[v].x[l] = 0.0f;
      } else {
        common::ExactDivisor divisor[4];
        bool in_window = true;
  #pragma unroll
        for (int c = 0; c < 4; ++c) {
          divisor[c] = common::exact_divisor(l_run[c]);
          in_window &= common::divisor_in_window(l_run[c]);  // &, not &&: no branch per element
        }
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l) in_window &= common::dividend_in_window(out_o[v].x[l]);
        if (in_window) {
  #pragma unroll
          for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
            for (int l = 0; l < Acc::ne; ++l) out_o[v].x[l] = common::exact_quotient(out_o[v].x[l], divisor[head_slot(l)]);
        } else {
  #pragma unroll
          for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
            for (int l = 0; l < Acc::ne; ++l) out_o[v].x[l] = out_o[v].x[l] / l_run[head_slot(l)];
        }
        if (kFp8 && a.kv_scaled)
  #pragma unroll
          for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
            for (int l = 0; l < Acc::ne; ++l) out_o[v].x[l] = out_o[v].x[l] * a.kv_scale;
      }
      // The stores, one loop per destination: with the choice made per element (out, a float32 or a
      // bf16 partial), every element was a few branches and their reconvergence, and the 32 stores of
      // a thread took about 4000 cycles (device run 3 of 2026-12-03; SASS: BSSY / BRA / BSYNC around
      // each of them).
      // Element (v, l) of this thread (bf16): head Acc::get_j(l), value dim (wg · kVChunks + v) · 64 + Acc::get_i(l).
      auto store_all = [&](auto&& store) {
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l)
            store(Acc::get_j(l) * kVDim + (wg * kVChunks + v) * sm90::kWgM + Acc::get_i(l), out_o[v].x[l]);
      };
      if constexpr (kFp8) {
        // The decoded kernels' Oᵀ rows are their value tile's dims in qk_decoded's order: a warp's
        // 8 lanes of a head hold dims in pairs 16 apart, so stored from registers each warp store
        // touched four times the 32-byte sectors (4 x 8192 a16w4 25.7 -> 28.4 µs, device run 1 of
        // 2026-12-03's fifth session). So the warpgroup stages its half of the token's output in
        // its value tile past the exchange above, [head][dim] in dim order, and stores 16-byte rows.
        float* staged = reinterpret_cast<float*>(own_v + kExchangeBytes);
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l)
            staged[Acc::get_j(l) * kStagedStride + v * sm90::kWgM + decoded_box_dim(Acc::get_i(l))] = out_o[v].x[l];
        warpgroup_sync(wg);
        constexpr int kDims = kVChunks * sm90::kWgM;  // 256: this warpgroup's value dims
        const int64_t dim0 = static_cast<int64_t>(wg) * kDims;
        if (w.single_pass) {
          uint16_t* dst = a.out + token * kNumHeads * kVDim + dim0;
          for (int c = wg_tid; c < kNumHeads * kDims / 8; c += sm90::kWarpgroupThreads) {
            const int h = c / (kDims / 8), d = 8 * (c % (kDims / 8));
            const float4 x = *reinterpret_cast<const float4*>(staged + h * kStagedStride + d);
            const float4 y = *reinterpret_cast<const float4*>(staged + h * kStagedStride + d + 4);
            const auto bf = [](float lo, float hi) { return common::pack_bf16(quant::f32_to_bf16(lo), quant::f32_to_bf16(hi)); };
            *reinterpret_cast<uint4*>(dst + h * kVDim + d) = uint4{bf(x.x, x.y), bf(x.z, x.w), bf(y.x, y.y), bf(y.z, y.w)};
          }
        } else {
          float* dst = a.part_o + (part_base + i * w.splits + w.split) * kNumHeads * kVDim + dim0;
          const bool bf16_partial = a.partial == problem::PartialFormat::bf16;
          for (int c = wg_tid; c < kNumHeads * kDims / 4; c += sm90::kWarpgroupThreads) {
            const int h = c / (kDims / 4), d = 4 * (c % (kDims / 4));
            float4 x = *reinterpret_cast<const float4*>(staged + h * kStagedStride + d);
            if (bf16_partial)
              x = float4{common::round_to_bf16(x.x), common::round_to_bf16(x.y), common::round_to_bf16(x.z),
                         common::round_to_bf16(x.w)};
            *reinterpret_cast<float4*>(dst + h * kVDim + d) = x;
          }
        }
      } else if (w.single_pass) {
        uint16_t* dst = a.out + token * kNumHeads * kVDim;
        store_all([&](int at, float x) { dst[at] = quant::f32_to_bf16(x); });
      } else {
        float* dst = a.part_o + (part_base + i * w.splits + w.split) * kNumHeads * kVDim;
        if (a.partial == problem::PartialFormat::bf16)
          store_all([&](int at, float x) { dst[at] = common::round_to_bf16(x); });
        else
          store_all([&](int at, float x) { dst[at] = x; });
      }
      consumer_sync();
      if (tid < kNumHeads) {
        const float lse = empty_split ? kNegInf : stat_m[tid] + common::log_base(kBase2, stat_l[tid]);
        if (w.single_pass) {
          if (a.lse != nullptr) a.lse[token * kNumHeads + tid] = common::natural_lse(kBase2, lse);
        } else {
          a.part_lse[(part_base + i * w.splits + w.split) * kNumHeads + tid] = lse;
        }
      }
      consumer_sync();  // stats, Q, P and the published statistics are reused by the next token
      if constexpr (Fused) {
        // The cluster's merge of the token: every block's partial row written (the barrier above,
        // then thread 0's release fence and arrival on each peer), merged by all of them from L2,
        // block w.split (its rank) taking its share of the chunks. Each token has rows of its own,
        // so no block waits for the peers' reads before it goes on.
        if (tid == 0) sm90::cluster_barrier_arrive_all(&cluster_bars[kPartialsWritten], static_cast<uint32_t>(w.splits));
        sm90::cluster_barrier_wait(&cluster_bars[kPartialsWritten], tokens_done & 1);
        const int64_t first_row = part_base + i * w.splits;
        sm90::cluster_merge_rows(a.part_o + first_row * kNumHeads * kVDim, a.part_lse + first_row * kNumHeads, w.splits,
                                 w.split, false, a.out + token * kNumHeads * kVDim,
                                 a.lse != nullptr ? a.lse + token * kNumHeads : nullptr, *scratch, kConsumerThreads,
                                 [] { consumer_sync(); });
        consumer_sync();  // the scratch is the next token's
      }
      ++tokens_done;
    };
    finish_token(std::integral_constant<int, 0>{});
    static_assert(kMaxPack <= 2, "the tile loop and the epilogue take tokens 0 and 1 of a group");
    if constexpr (Pack > 1)
      if (group > 1) finish_token(std::integral_constant<int, 1>{});
  }
}

// The launch configuration of a fused kernel: clusters of args.num_splits blocks along x.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster{};
  ClusterLaunch(int64_t blocks, int threads, int shared_bytes, int splits, hipStream_t stream) {
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = static_cast<std::size_t>(shared_bytes);
    config.stream = stream;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(splits);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
};

template <std::size_t I, bool Chunked, bool Fused, int Pack = 1>
constexpr auto kKernel =
    hopper_attention_kernel<kInstances[I].kv, kInstances[I].p, kInstances[I].base, Chunked, Fused, Pack>;

// Above 48 KB a kernel must opt in; once per kernel (a runtime call, legal during capture).
template <std::size_t I, bool Chunked, bool Fused, int Pack = 1>
void opt_in() {
  static const bool opted_in = [] {
    MLACHECK_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kKernel<I, Chunked, Fused, Pack>),
                                           hipFuncAttributeMaxDynamicSharedMemorySize,
                                           kPlan<kInstances[I].kv, Fused, Pack>.bytes));
    return true;
  }();
  static_cast<void>(opted_in);
}

template <std::size_t I, bool Chunked, bool Fused, int Pack>
void launch_kernel(const AttentionArgs& args, const KvMaps& maps, int64_t blocks, hipStream_t stream) {
  constexpr common::Instance in = kInstances[I];
  constexpr int kSharedBytes = kPlan<in.kv, Fused, Pack>.bytes;
  opt_in<I, Chunked, Fused, Pack>();
  if constexpr (Fused) {
    ClusterLaunch l(blocks, kThreads<in.kv, Pack>, kSharedBytes, args.num_splits, stream);
    MLACHECK_GPU_CHECK(cudaLaunchKernelEx(&l.config, kKernel<I, Chunked, Fused, Pack>, args, maps));
  } else {
    kKernel<I, Chunked, Fused, Pack><<<static_cast<unsigned>(blocks), kThreads<in.kv, Pack>, kSharedBytes, stream>>>(
        args, maps);
  }
}

template <std::size_t I, int Pack>
void launch_packed(const AttentionArgs& args, const KvMaps& maps, int64_t blocks, bool fused, hipStream_t stream) {
  if constexpr (kInstances[I].kv == problem::KvFormat::bf16) {
    if (fused) return launch_kernel<I, false, true, Pack>(args, maps, blocks, stream);
  }
  if (fused) throw std::logic_error("hopper: the merge in a cluster is compiled for bf16 caches only");
  if (args.item_start != nullptr) launch_kernel<I, true, false, Pack>(args, maps, blocks, stream);
  else launch_kernel<I, false, false, Pack>(args, maps, blocks, stream);
}

// packed: the bf16 kernel that takes kMaxPack tokens of a request at a time (gpu/hopper/launch.cpp
// asks for it where some q_len > 1); else the one-token kernel, whose registers and shared memory
// hold one token's state.
template <std::size_t I>
void launch_instance(const AttentionArgs& args, const KvMaps& maps, int64_t blocks, bool fused, bool packed,
                     hipStream_t stream) {
  if constexpr (kInstances[I].kv == problem::KvFormat::bf16) {
    if (packed) return launch_packed<I, kMaxPack>(args, maps, blocks, fused, stream);
  }
  if (packed) throw std::logic_error("hopper: packed tokens are compiled for bf16 caches only");
  launch_packed<I, 1>(args, maps, blocks, fused, stream);
}

template <std::size_t... I>
void dispatch(std::size_t instance, const AttentionArgs& args, const KvMaps& maps, int64_t blocks, bool fused,
              bool packed, hipStream_t stream, std::index_sequence<I...>) {
  ((instance == I ? launch_instance<I>(args, maps, blocks, fused, packed, stream) : void()), ...);
}

void launch(std::size_t instance, const AttentionArgs& args, int64_t blocks, bool fused, bool packed,
            StreamHandle stream) {
  if (blocks == 0) return;
  // The cache's tensor maps (host calls, legal during graph capture; the kernel parameter holds
  // them by value): a contiguous cache is copied a tile per box, a paged one in boxes of 2^k rows
  // (KvMaps). A batch with no cache rows has no key to copy, and its maps are never read.
  KvMaps maps{};
  if (kInstances[instance].kv == problem::KvFormat::bf16 && args.cache_rows > 0)
    for (int k = args.kv_indices == nullptr ? kRunMaps - 1 : 0; k < kRunMaps; ++k)
      maps.rows[k] = sm90::bf16_row_tensor_map(args.kv_bf16, args.cache_rows, kQkDim, 1 << k);
  // MXFP4: the map of the block scales (produce_mxfp4): 128-byte boxes at the end of the array, for
  // a contiguous cache and a paged tile in one run.
  if (kInstances[instance].kv == problem::KvFormat::mxfp4 && args.cache_rows > 0)
    maps.scales = sm90::byte_tensor_map_1d(args.kv_mxfp4_scale, args.cache_rows * kMxRowScales,
                                           kMxScaleBoxBytes);
  dispatch(instance, args, maps, blocks, fused, packed, static_cast<hipStream_t>(stream),
           std::make_index_sequence<kInstances.size()>());
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace

bool launch_attention(std::size_t instance, const AttentionArgs& args, int64_t blocks, StreamHandle stream) {
  launch(instance, args, blocks, false, false, stream);
  return false;
}

bool launch_attention_fused(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                            StreamHandle stream) {
  launch(instance, args, blocks, true, false, stream);
  return true;
}

bool launch_attention_packed(std::size_t instance, const AttentionArgs& args, int64_t blocks, StreamHandle stream) {
  launch(instance, args, blocks, false, true, stream);
  return false;
}

bool launch_attention_fused_packed(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                                   StreamHandle stream) {
  launch(instance, args, blocks, true, true, stream);
  return true;
}

int cluster_merge_capacity(std::size_t instance, int splits) {
  if (splits < 2 || splits > sm90::kMaxClusterSplits || instance >= kInstances.size() ||
      kInstances[instance].kv != problem::KvFormat::bf16)
    return 0;
  // Clusters of `splits` blocks of one SM's shared memory each must fit on a GPC; asked of the
  // runtime once per split count (bf16 is instance 0: static_assert below). The packed kernel's
  // blocks (384 threads, kPlan<bf16, true, kMaxPack>) hold one SM each too: the same clusters fit.
  static_assert(kInstances[0].kv == problem::KvFormat::bf16);
  // One block per SM for both (sm_90: 228 KB of shared memory an SM, 1 KB of it reserved per block).
  static_assert(2 * (kPlan<problem::KvFormat::bf16, true>.bytes + 1024) > 233472 &&
                    2 * (kPlan<problem::KvFormat::bf16, true, kMaxPack>.bytes + 1024) > 233472,
                "the fused kernels hold one SM a block, packed or not");
  static int capacity[sm90::kMaxClusterSplits + 1] = {};  // 0 unknown, -1 none
  int& known = capacity[splits];
  if (known == 0) {
    opt_in<0, false, true>();
    ClusterLaunch l(splits, kThreads<problem::KvFormat::bf16>, kPlan<problem::KvFormat::bf16, true>.bytes, splits,
                    nullptr);
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kKernel<0, false, true>, &l.config);
    known = e == cudaSuccess && clusters > 0 ? clusters : -1;
    if (e != cudaSuccess) static_cast<void>(cudaGetLastError());  // a refusal is an answer, not an error
  }
  return known > 0 ? known : 0;
}

}  // namespace mlacheck::gpu::hopper
