#pragma once
// The Hopper attention kernel's derived types and constants, its shared-memory plan per KV format
// and its static_asserts (the part of gpu/hopper/attention.hip that FlashMLA's traits.h is).
// Included by gpu/hopper/attention.hip only: its device code, in the anonymous namespace of that one
// translation unit.
#include <algorithm>
#include <cstdint>

#include "gpu/common/args.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/e4m3_order.h"
#include "gpu/hopper/value_order.h"
#include "gpu/mma/mma_nvidia.h"
#include "gpu/sm90/cluster_merge.h"
#include "gpu/sm90/wgmma.h"
#include "gpu/warp.h"
#include "problem/recipe.h"
#include "problem/shape.h"

namespace mlacheck::gpu::hopper {
namespace {

using common::AttentionArgs;
using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
using KvTile = sm90::Swizzle128Tile<kTileKeys>;
// The decoded kernels' (a16w8, a16w4, a4w4) value tile: Vᵀ, a row of the tile's 64 keys per dim,
// read K-major by P·V. In Swizzle128Tile's terms a box is 64 dims (value_row's places: value_order.h)
// and the K index of key k of box b is 64 b + k.
using ValueTile = sm90::Swizzle128Tile<kValueBoxDims>;
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
// The all-fp8 recipes' P·V on the e4m3 product (kE4m3Pv in attention.hip), which reads both of
// its operands K-major only (PTX: no transposed form for 8-bit types): the value tile is Vᵀ, 512
// rows (a box's 64 dims in value_row's places, box after box) x the tile's 64 keys of e4m3
// codes in KMajorLayout8 (core matrices of 8 dims x 16 keys, 32 KB), stored by stmatrix .trans of
// code-byte pairs (qk_decoded), so that a warp's 16 keys lie in one core-matrix column in the
// order e4m3_key_position gives; P is [16 heads][64 keys] e4m3 codes in the same layout and order.
__host__ __device__ constexpr sm90::KMajorLayout8 e4m3_layout() { return {kTileKeys}; }
constexpr int kE4m3ValueBytes = kVDim * kTileKeys;  // 32 KB
constexpr int kE4m3PvSteps = kTileKeys / sm90::kWgK32;  // 2
static_assert(kE4m3ValueBytes <= kFp8ValueBytes && e4m3_layout().stride_bytes() * (kVDim / sm90::kCoreRows) ==
                                                       kE4m3ValueBytes,
              "the e4m3 value tile: 64 groups of 8 dims, 4 core matrices of 16 keys each");
// Q of the all-fp8 recipes as Sᵀ = K Qᵀ's B operand on the e4m3 product (qk_e4m3): [16 heads][576]
// e4m3 codes K-major in the canonical 8-bit layout, dims in e4m3_qk_dim's order (9 KB of QTile's 18).
__host__ __device__ constexpr sm90::KMajorLayout8 e4m3_q_layout() { return {kQkDim}; }
static_assert(kNumHeads * kQkDim <= QTile::kBytes && kQkDim % sm90::kWgK32 == 0);
// e4m3_key_position (gpu/hopper/e4m3_order.h): where key `key` of a tile lies in a K-major row of
// the e4m3 value tile and of P.

// The end of a token in the decoded kernels, in each warpgroup's value tile: the half of Oᵀ handed
// to the other warpgroup (kExchangeBytes: 4 chunks of 8 floats a thread).
constexpr int kExchangeBytes = (kVDim / 2 / sm90::kWgM) * Acc::ne * sm90::kWarpgroupThreads * sizeof(float);
static_assert(kExchangeBytes <= kFp8ValueBytes, "the exchange fits in a value tile");
static_assert(kFp8PartBytes % 16 == 0 && kFp8RowBytes % 16 == 0, "bulk copies move 16-byte multiples");
// An e4m3 value tile's region (kE4m3Pv): the tile, or at a token's end the exchange (above), in
// whole 1024-byte swizzle periods so that the next region stays aligned.
constexpr int kE4m3ValueRegionBytes = (std::max<int>(kE4m3ValueBytes, kExchangeBytes) + 1023) / 1024 * 1024;

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
//   value  fp8, MXFP4: per warpgroup, the bf16 (a4w4 f16) value tile of its latest tile (ValueTile: Vᵀ,
//          boxes 0..7; the all-fp8 recipes: Vᵀ's e4m3 codes in e4m3_layout, a region of
//          kE4m3ValueRegionBytes)
//   q      Q of the current token in QTile layout (16 rows; fp8: dims permuted as the A fragments)
//   p      per warpgroup: P of its latest tile, [64 keys][16 heads] bf16 (Oᵀ's B operand, MN-major;
//          a4w4 f16; the all-fp8 recipes e4m3 codes [16 heads][64 keys] K-major in e4m3_layout)
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
                                  int part_bytes = kFp8PartBytes, int pack = 1, int value_bytes = kFp8ValueBytes) {
  SharedPlan s;
  if (fp8) {
    s.value = 0;
    s.q = kWarpgroups * value_bytes;
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
// P: fp8 KV with fp8 P (the all-fp8 recipes) takes the e4m3 value tiles and the longer ring.
template <problem::KvFormat Kv, bool Fused, int Pack = 1, problem::PFormat P = problem::PFormat::bf16>
constexpr SharedPlan kPlan =
    Kv == problem::KvFormat::mxfp4 ? shared_plan(true, false, kMxfp4RingParts, kMxPartBytes)
    : Kv == problem::KvFormat::fp8 && P == problem::PFormat::fp8
        ? shared_plan(true, Fused, kE4m3RingParts, kFp8PartBytes, Pack, kE4m3ValueRegionBytes)
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
static_assert(plan_fits(kPlan<problem::KvFormat::fp8, false, 1, problem::PFormat::fp8>, true) &&
                  !plan_fits(shared_plan(true, false, kE4m3RingParts + 1, kFp8PartBytes, 1, kE4m3ValueRegionBytes),
                             true),
              "the all-fp8 plan: kE4m3RingParts parts fit, one more would not (config.h)");
static_assert(plan_fits(kPlan<problem::KvFormat::mxfp4, false>, true) &&
                  kPlan<problem::KvFormat::mxfp4, false>.stage % 128 == 0,
              "the MXFP4 plan exceeds sm_90's 227 KB or misaligns its parts");
static_assert(KvTile::kBytes % KvTile::kAtomBytes == 0 && QTile::kBoxBytes % QTile::kAtomBytes == 0 &&
              kFp8ValueBytes % KvTile::kAtomBytes == 0);

}  // namespace
}  // namespace mlacheck::gpu::hopper
