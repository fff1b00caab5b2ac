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
// stored), and stores the 512 value dims as the bf16 value tile of this warpgroup, Vᵀ with a row per
// dim that P·V reads K-major (traits.h ValueTile; rows past the tile's keys stored as zeros). Unlike step 3
// above, each warpgroup computes Oᵀ of its own tiles over all 512 value dims (both rescale by every
// tile's α, the other's taken from its published statistics), so the two share only the softmax
// statistics and their decode phases overlap (783 -> 556 µs at 256 x 8192, docs/PERF.md); the two
// partials are added at the end of a token, which changes only the float32 order. Each thread's A
// fragment takes 16 consecutive dims of a row per box in one load, so the K-major order of the
// products' dims is permuted within each box; Q is staged in the same permutation, which leaves
// every product the same and only the float32 summation order different (the bound's delta_acc).
// The A fragments are stored as they are by stmatrix .trans, each column (a dim) into the Vᵀ row
// value_row places it at (gpu/hopper/value_order.h): Oᵀ's rows come out as whole 8-dim blocks, so
// the epilogue stores from registers, 8 lanes of a head on one 32-byte sector, as the bf16 kernel's.
// The all-fp8 kernels' e4m3 Vᵀ rows are placed the same way (store_e4m3_value_box). (With the rows in
// the K order the output was staged in shared memory first: a token's epilogue 6.5 k cycles, now
// 5.3 k, bf16's 3.5 k; H100 stamps of device call 5 of 2026-12-06's eighteenth session and call 2 of
// the nineteenth.) In these kernels the owner
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
// fp8 Q, KV and P (the all-fp8 recipes, a8w8*): the a16w8 kernel with both products on the e4m3
// product (wgmma .e4m3, m64n16k32), which reads 8-bit operands K-major only. Q·Kᵀ takes K's codes
// straight as the register A operand (qk_e4m3: no conversion) against Q's codes staged K-major
// (stage_q_e4m3_codes); P·V reads Vᵀ from an e4m3 value tile that the owner stores transposed, a
// byte pair at a time by stmatrix .trans (store_e4m3_value_box: 32 KB where the bf16 tile took 64,
// so the ring holds 15 parts, config.h), and P as e4m3 codes in the same layout. Every product of
// two e4m3 values is exact in float32; the e4m3 product's own accumulation is kept to one box of
// Q·Kᵀ and one tile of P·V (config.h kE4m3PromoteScores, kE4m3PromoteOutputs), each added to the
// scores and Oᵀ in float32; a tile's P·V sums are added at the warpgroup's next tile, not waited for
// at its own (its wait was the tile's largest stall: the tile 4 % faster, device call 12 of
// 2026-12-06's twenty-third session).
// MXFP4 Q and KV with f16 P, base 2 (a4w4): the a16w4 kernel with Q from the Q quantization's codes
// and scales (stage_q_mxfp4, decoded to bf16 exactly), exp2 and a base-2 LSE, and P·V on f16
// operands: P rounded to f16 and the value tile stored as V rounded to f16 (the emulation's P·V
// operand type; exact for scales 104..140), each decoded bf16 pair converted by one cvt. (P as its
// exact high and low bf16 parts against the bf16 value tile, two P·V products a tile, ran at
// 850 µs at 256 x 8192 against 548; device run 1 of 2026-12-03's seventh session.)
// Split-K with 2 to 8 splits, every instance (Fused): the blocks of one request's splits form a thread-block
// cluster; each writes its partial of a token to the workspace as for the merge kernel, and once all
// are written (an mbarrier each block's thread 0 arrives on in every peer, after one release fence:
// barrier.cluster would need the producer warp, which has left) the blocks merge the token's output
// from L2 between them (gpu/sm90/cluster_merge.h, the merge kernel's float operations): no second
// kernel. The decoded kernels load two splits' rows at a time there, not eight: with eight in
// flight the all-fp8 kernel's long-lived values spilled (170 bytes, reloaded in its tile loop;
// ptxas -v), with two none do; the additions are the same, in split order.
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
//
// The parts, each a header that only this file includes (their code in this translation unit's
// anonymous namespace): traits.h (types, constants, the shared-memory plan), sync.h (the barriers,
// 16-byte copies), work.h (work items, their tokens and tiles, pages, the tensor maps), produce.h
// (the producer warp for each KV format), products.h (the softmax step's reductions, Oᵀ's rescaling
// and the warpgroup products), decoded.h (fp8 and MXFP4 rows decoded by a tile's owner); here: the
// kernel and its launches.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda.h>

#include "gpu/common/device_common.h"
#include "gpu/common/device_math.h"
#include "gpu/common/exact_quotient.h"
#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
#include "gpu/common/operand_decode.h"
#include "gpu/common/operands.h"
#include "gpu/common/owner.h"
#include "gpu/common/rounding.h"
#include "gpu/common/vendor_math.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/decoded.h"
#include "gpu/hopper/produce.h"
#include "gpu/hopper/products.h"
#include "gpu/hopper/sync.h"
#include "gpu/hopper/traits.h"
#include "gpu/hopper/work.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/kernels.h"
#include "gpu/hopper/merge_choice.h"
#include "gpu/mma/mma_nvidia.h"
#include "gpu/platform.h"
#include "gpu/sm90/cluster.h"
#include "gpu/sm90/cluster_merge.h"
#include "gpu/sm90/tensor_map.h"
#include "gpu/sm90/tma.h"
#include "gpu/sm90/wgmma.h"
#include "gpu/stamps.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::hopper {
namespace {

#if defined(MLACHECK_HOPPER_STAMPS)
// gpu/stamps.h: kStampPoints words a block, for the first kStampBlocks blocks.
__device__ unsigned long long g_kernel_stamps[kStampBlocks * kStampPoints];
#endif

// Thread 0's stamp of point p when `now` (the block's first token): the SM's cycle counter, or the
// global timer for the _ns points; nothing outside a stamps build (gpu/stamps.h).
__device__ __forceinline__ void stamp(StampPoint p, bool now = true) {
#if defined(MLACHECK_HOPPER_STAMPS)
  if (threadIdx.x == 0 && blockIdx.x < kStampBlocks && now) {
    uint64_t t = 0;
    if (p == StampPoint::entry_ns || p == StampPoint::exit_ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    else asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    g_kernel_stamps[blockIdx.x * kStampPoints + static_cast<int>(p)] = t;
  }
#else
  static_cast<void>(p);
  static_cast<void>(now);
#endif
}

// Chunked: the persistent schedule's item queue (ItemSource), else a block per item. Fused
// (split-K): the a.num_splits blocks of a request form a thread-block cluster and merge their
// partials from L2 in it (gpu/sm90/cluster_merge.h), writing out and lse; no merge kernel follows.
template <problem::KvFormat Kv, problem::PFormat P, problem::SoftmaxBase Base, bool Chunked, bool Fused, int Pack>
__global__ void __launch_bounds__(kThreads<Kv, Pack>, 1)
    hopper_attention_kernel(AttentionArgs a, const __grid_constant__ KvMaps kv_maps) {
  static_assert(P == problem::PFormat::bf16 || (Kv == problem::KvFormat::fp8 && P == problem::PFormat::fp8) ||
                    (Kv == problem::KvFormat::mxfp4 && P == problem::PFormat::f16 && Base == problem::SoftmaxBase::two),
                "bf16, fp8 or MXFP4 KV with bf16 P, fp8 KV with fp8 P, either base; MXFP4 KV with f16 P, base 2 "
                "(instances.h)");
  static_assert(!Fused || !Chunked, "the merge in a cluster: split-K");
  static_assert(Pack == 1 || (Kv == problem::KvFormat::bf16 && Pack <= kMaxPack),
                "tokens packed: bf16 (the decoded kernels' Oᵀ of 512 dims fills their registers)");
  constexpr bool kMxfp4 = Kv == problem::KvFormat::mxfp4;
  // a4w4: f16 P, base 2, V rounded to f16 (P·V on f16 operands), and Q the MXFP4 codes of the Q
  // quantization (the one instance with f16 P, instances.h).
  constexpr bool kF16P = P == problem::PFormat::f16;
  constexpr bool kBase2 = Base == problem::SoftmaxBase::two;
  // The decoded path: fp8 and MXFP4 rows alike (MXFP4 differs in its producer and its rows only).
  constexpr bool kFp8 = Kv == problem::KvFormat::fp8 || kMxfp4;
  using DecodedRows = std::conditional_t<kMxfp4, Mxfp4Rows<kF16P>, Fp8Rows>;
  // The all-fp8 recipes (a8w8*): both products on the e4m3 product (qk_e4m3, issue_pv_e4m3; the
  // value tile holds Vᵀ's codes and P is stored as e4m3 codes: traits.h e4m3_layout).
  constexpr bool kE4m3Pv = Kv == problem::KvFormat::fp8 && P == problem::PFormat::fp8;
  // P·V's operands where not on the e4m3 product: f16 for a4w4 (f16 P, V rounded to f16), else bf16.
  constexpr sm90::WgOperand kPvOperand = kF16P ? sm90::WgOperand::f16 : sm90::WgOperand::bf16;
  constexpr int kRingParts = kMxfp4 ? kMxfp4RingParts : kE4m3Pv ? kE4m3RingParts : kFp8RingParts;
  constexpr SharedPlan plan = kPlan<Kv, Fused, Pack, P>;
  constexpr int kValueRegionBytes = kE4m3Pv ? kE4m3ValueRegionBytes : kFp8ValueBytes;
  extern __shared__ uint4 shared_words[];
  // The swizzled tiles need a 1024-byte-aligned base (kAlignSlack).
  auto* raw = reinterpret_cast<unsigned char*>(shared_words);
  const uint32_t misalign = static_cast<uint32_t>(__cvta_generic_to_shared(raw)) % KvTile::kAtomBytes;
  unsigned char* smem = raw + (misalign == 0 ? 0 : KvTile::kAtomBytes - misalign);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarpSize;
  stamp(StampPoint::entry);
  stamp(StampPoint::entry_ns);
  // Launched with_previous after the Q quantization or the work list (gpu/common/kernel_start.h):
  // the producer of a block per item streams the cache (the caller's) without waiting for them;
  // what reads their output waits first (grid_dependency.h's rule; the consumers wait in every
  // block, so the block's end implies the predecessor's). No early let_next_kernel_start (its
  // comment).
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
  stamp(StampPoint::ready);
  // Both roles read the work list, unless an earlier call made it (the producer then reads only it
  // and the caller's cache; the consumers wait below for Q's codes).
  if constexpr (Chunked)
    if (!a.plan_made_before) common::wait_for_previous_kernel();
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
        if (tid < kConsumerThreads + kWarpSize) produce_fp8<kRingParts>(a, items, smem + plan.stage, full, empty);
      }
    } else {
      produce<Chunked, Pack>(a, items, kv_maps, smem + plan.stage, full, empty);
    }
    return;
  }
  if constexpr (kMovedRegisters) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kConsumerRegisters));
  // Q's codes and scale are the Q quantization's.
  if constexpr (!Chunked) common::wait_for_previous_kernel();
  else if (a.plan_made_before) common::wait_for_previous_kernel();
  stamp(StampPoint::started);

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
  unsigned char* own_v = smem + plan.value + wg * kValueRegionBytes;  // fp8 only
  // fp8 only: this warp's scratch word (qk_decoded's release)
  const uint32_t drain = static_cast<uint32_t>(__cvta_generic_to_shared(smem + plan.drain)) + 4 * (tid / kWarpSize);
  const unsigned char* other_v = smem + plan.value + other * kValueRegionBytes;
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
  if (kE4m3Pv && a.q_scale != nullptr) score_scale *= *a.q_scale;
  if (kFp8 && a.kv_scaled) score_scale *= a.kv_scale;
  // This thread's four heads (accumulator columns), as head_slot numbers them.
  int my_head[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) my_head[c] = 8 * (c / 2) + 2 * (lane % 4) + c % 2;

  int iter = 0;  // tiles consumed so far: the ring's stage and phase, as the producer counts them
  int tokens_done = 0;  // Fused: the cluster barriers' phase
  for (TokenCursor<false, Chunked, Pack> c(a, items); c.more; c.advance(a)) {
    const WorkItem& w = c.w;
    // The group's tokens i0 .. i0 + group - 1 of the request (query rows token0 ..): its tiles are
    // the union of their keys (each tile copied once), each token's own keys its mask.
    const int64_t i0 = c.i;
    const int group = Pack == 1 ? 1 : c.group();
    const int64_t part_base = w.part_base;
    const int64_t token0 = w.q_row0 + i0;
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
      } else if constexpr (kE4m3Pv) {
        stage_q_e4m3_codes(a, token0, smem + plan.value, sq, tid);
      } else {
        stage_q_fp8(a, token0, smem + plan.value, sq, tid);
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
    stamp(StampPoint::q_staged, tokens_done == 0);
    stamp(StampPoint::next_staged, tokens_done == 1);

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
#if defined(MLACHECK_HOPPER_STAMPS)
    // gpu/stamps.h first_box: whether the cache's first bytes or Q arrive last. The block's first
    // token is ring iteration 0, whose first box (bf16) or part (decoded) is full[0], phase 0; warp 0
    // reads that box or part itself, so the ring cannot have moved past it yet.
    if (tokens_done == 0 && tid < kWarpSize) {
      if (tiles > 0) mma::bulk_barrier_wait(&full[0], 0);
      stamp(StampPoint::first_box);
    }
#endif
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
        alpha[c] = common::vendor_exp<kBase2>(m_run[c] - m_new[c]);  // 0 on the first tile
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
      if constexpr (kE4m3Pv) {
        // P rounded to e4m3fn (supports()) as codes: a head's two keys of this thread, rows g and
        // g + 8 (elements l and l + 2), lie side by side in P's K-major rows (e4m3_key_position).
        float pv[Acc::ne];
#pragma unroll
        for (int l = 0; l < Acc::ne; ++l) {
          pv[l] = common::vendor_exp<kBase2>(s.x[l] - m_new[head_slot(l)]);  // masked: b^-inf = 0
          sum[head_slot(l)] += pv[l];
        }
        constexpr int kRowG[] = {0, 1, 4, 5};  // the elements of row g; l + 2 of row g + 8, the same head
#pragma unroll
        for (const int l : kRowG)
          *reinterpret_cast<uint16_t*>(own_p + e4m3_layout().offset_bytes(Acc::get_j(l),
                                                                        e4m3_key_position(Acc::get_i(l)))) =
              common::p_pair_to_e4m3fn_pair(pv[l], pv[l + 2]);
      } else {
#pragma unroll
        for (int l = 0; l < Acc::ne; l += 2) {  // elements l, l + 1: one key, adjacent heads
          const float p0 = common::vendor_exp<kBase2>(s.x[l] - m_new[head_slot(l)]);  // masked: b^-inf = 0
          const float p1 = common::vendor_exp<kBase2>(s.x[l + 1] - m_new[head_slot(l + 1)]);
          sum[head_slot(l)] += p0;
          sum[head_slot(l + 1)] += p1;
          if constexpr (kF16P) {
            *reinterpret_cast<uint32_t*>(own_p + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
                common::f32_pair_to_f16_pair(p0, p1);
          } else {
            *reinterpret_cast<uint32_t*>(own_p + kPLayout.offset_bytes(Acc::get_i(l), Acc::get_j(l))) =
                common::pack_bf16(quant::f32_to_bf16(common::round_to_bf16(p0)),
                                  quant::f32_to_bf16(common::round_to_bf16(p1)));
          }
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
          alpha[p][c] = common::vendor_exp<kBase2>(m_run_all[p][c] - m_new[p][c]);  // 0 on the first tile
          sum[p][c] = 0.0f;
        }
#pragma unroll
      for (int p = 0; p < Pack; ++p)
#pragma unroll
        for (int l = 0; l < Acc::ne; l += 2) {  // elements l, l + 1: one key, adjacent heads
          const float p0 = common::vendor_exp<kBase2>(s[p].x[l] - m_new[p][head_slot(l)]);  // masked: b^-inf = 0
          const float p1 = common::vendor_exp<kBase2>(s[p].x[l + 1] - m_new[p][head_slot(l + 1)]);
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
      // The all-fp8 kernels' promoted P·V (kE4m3PromoteOutputs): a tile's products go into these fresh
      // accumulators and are added to Oᵀ in float32 once done, at this warpgroup's next tile (qk_e4m3's
      // after_pv, whose wait the value tile's rewrite needs anyway) or after the token's last: so the
      // warpgroup goes on to its next part's wait and loads while its P·V runs, where waiting right
      // after the issue left it idle for the products' latency. The same additions in the same order
      // (Oᵀ·α of the tile, plus its sums, before the other warpgroup's next α): the same bits.
      constexpr bool kDeferredPv = kE4m3Pv && kE4m3PromoteOutputs;
      [[maybe_unused]] Acc pv_sums[kOChunks];
      [[maybe_unused]] auto add_pv_sums = [&] {
#pragma unroll
        for (int v = 0; v < kOChunks; ++v) {
          sm90::wgmma_fence_operand(pv_sums[v]);
#pragma unroll
          for (int l = 0; l < Acc::ne; ++l) o[v].x[l] += pv_sums[v].x[l];
        }
        settle_outputs();
      };
      const int own_first = (wg - first % 2 + 2) % 2;  // this warpgroup's first tile of the token
      for (int t = own_first; t < tiles; t += 2) {
        const int n = keys.keys_in(t);
        // This warp's part: its codes into registers, the part released once they are; the decode
        // and Q·Kᵀ, which write this warpgroup's value tile (its own P·V of tile t - 2 done first:
        // waited below, or at qk_decoded's or qk_e4m3's start where DecodedRows::kPvWaitedInQk or
        // kDeferredPv).
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
        } else if constexpr (kE4m3Pv) {
          qk_e4m3(s, smem + plan.stage + slot * kFp8PartBytes, &empty[slot], sq, own_v, n, wg_warp, lane, drain, [&] {
            if constexpr (kDeferredPv) {
              if (t > own_first) add_pv_sums();  // tile t - 2's P·V
            }
          });
        } else {
          qk_decoded<DecodedRows>(s, smem + plan.stage + slot * kFp8PartBytes, 0, &empty[slot], sq, own_v, n, wg_warp,
                                  lane, drain);
        }
        if constexpr (DecodedRows::kPvWaitedInQk) settle_outputs();  // the previous P·V, waited in qk_decoded
        if (t > 0) take_stats(t - 1);
        float alpha[4];
        softmax_step(s, n, alpha);  // publishes α and m' on the way
        if constexpr (kE4m3Pv && !kE4m3PromoteOutputs) {
          issue_pv_e4m3<kOChunks>(o, alpha, own_v, own_p);
        } else if constexpr (kDeferredPv) {
          // The tile's P·V in fresh accumulators (a split's sums do not run through the e4m3
          // product's own accumulation: issue_pv_e4m3_fresh), added to Oᵀ by add_pv_sums.
          rescale_outputs<true>(o, alpha);
          issue_pv_e4m3_fresh<kOChunks>(pv_sums, own_v, own_p);
        } else {
          issue_pv<kOChunks, ValueLayout::dim_rows, kPvOperand, true>(o, alpha, own_v, own_p, 0);
        }
        if constexpr (!DecodedRows::kPvWaitedInQk && !kDeferredPv) {
          sm90::wgmma_wait<0>();
          settle_outputs();
        }
      }
      if constexpr (DecodedRows::kPvWaitedInQk) {  // the token's last P·V
        sm90::wgmma_wait<0>();
        settle_outputs();
      }
      if constexpr (kDeferredPv) {
        if (own_first < tiles) {  // the token's last P·V of this warpgroup
          sm90::wgmma_wait<0>();
          add_pv_sums();
        }
      }
      if (tiles > 0 && (first + tiles - 1) % 2 != wg) take_stats(tiles - 1);
    } else {
      // P·V of a tile for every token of the group (P of N = 16 Pack columns at p_base, token p's
      // from column 16 p): each Oᵀ rescaled by its token's α and fenced before the product.
      auto issue_pv_group = [&](const float (&alpha)[Pack][4], const unsigned char* kv, const unsigned char* p_base) {
        if constexpr (Pack == 1) {
          issue_pv<kVChunks, ValueLayout::key_rows>(o_all[0], alpha[0], kv, p_base, wg * kVChunks);
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
    stamp(StampPoint::tiles_done, tokens_done == 0);

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
        stamp(StampPoint::halves_met, tokens_done == 0);
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
      stamp(StampPoint::exchanged, tokens_done == 0);
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
      stamp(StampPoint::quotients, tokens_done == 0);
      // The stores, one loop per destination: with the choice made per element (out, a float32 or a
      // bf16 partial), every element was a few branches and their reconvergence, and the 32 stores of
      // a thread took about 4000 cycles (device run 3 of 2026-12-03; SASS: BSSY / BRA / BSYNC around
      // each of them).
      // Element (v, l) of this thread: head Acc::get_j(l), value dim (wg · kVChunks + v) · 64 +
      // out_dim(Acc::get_i(l)): Oᵀ's rows in dim order (bf16), or in value_row's (the decoded
      // kernels' Vᵀ tiles: value_order.h), where 8 lanes of a head still cover one 32-byte sector.
      // (In qk_decoded's K order, as the decoded kernels' value tiles held them until 2026-12-06, a
      // head's 8 lanes held dims in pairs 16 apart and each warp store touched four times the
      // sectors: 4 x 8192 a16w4 25.7 -> 28.4 µs, device run 1 of 2026-12-03's fifth session; the
      // output was then staged in shared memory first.)
      const auto out_dim = [](int row) { return kFp8 ? value_dim(row) : row; };
      auto store_all = [&](auto&& store) {
  #pragma unroll
        for (int v = 0; v < kVChunks; ++v)
  #pragma unroll
          for (int l = 0; l < Acc::ne; ++l)
            store(Acc::get_j(l) * kVDim + (wg * kVChunks + v) * sm90::kWgM + out_dim(Acc::get_i(l)), out_o[v].x[l]);
      };
      if (w.single_pass) {
        uint16_t* dst = a.out + token * kNumHeads * kVDim;
        store_all([&](int at, float x) { dst[at] = quant::f32_to_bf16(x); });
      } else {
        float* dst = a.part_o + (part_base + i * w.splits + w.split) * kNumHeads * kVDim;
        if (a.partial == problem::PartialFormat::bf16)
          store_all([&](int at, float x) { dst[at] = common::round_to_bf16(x); });
        else
          store_all([&](int at, float x) { dst[at] = x; });
      }
      stamp(StampPoint::out_issued, tokens_done == 0);
      consumer_sync();
      if (tid < kNumHeads) {
        // log_b l by the vendor's float32 log, as the merge's (config.h kMergeWeights says why): the
        // emulation's double-precision log is a chain of dependent steps whose code and constants a
        // block's end waits for after the L2 flush. Within the LSE tolerance (check/lse.h).
        const float lse = empty_split ? kNegInf : stat_m[tid] + common::vendor_log<kBase2>(stat_l[tid]);
        if (w.single_pass) {
          if (a.lse != nullptr) a.lse[token * kNumHeads + tid] = common::natural_lse(kBase2, lse);
        } else {
          a.part_lse[(part_base + i * w.splits + w.split) * kNumHeads + tid] = lse;
        }
      }
      consumer_sync();  // stats, Q, P and the published statistics are reused by the next token
      stamp(StampPoint::stored, tokens_done == 0);
      if constexpr (Fused) {
        // The cluster's merge of the token: every block's partial row written (the barrier above,
        // then thread 0's release fence and arrival on each peer), merged by all of them from L2,
        // block w.split (its rank) taking its share of the chunks. Each token has rows of its own,
        // so no block waits for the peers' reads before it goes on.
        Barrier* cluster_bars = reinterpret_cast<Barrier*>(smem + plan.cluster_bars);
        auto* scratch = reinterpret_cast<sm90::ClusterMergeScratch*>(smem + plan.scratch);
        if (tid == 0) sm90::cluster_barrier_arrive_all(&cluster_bars[kPartialsWritten], static_cast<uint32_t>(w.splits));
        sm90::cluster_barrier_wait(&cluster_bars[kPartialsWritten], tokens_done & 1);
        const int64_t first_row = part_base + i * w.splits;
        constexpr int kMergeInFlight = kFp8 ? 2 : sm90::kMaxClusterSplits;  // the decoded kernels' registers
        sm90::cluster_merge_rows<kMergeWeights, kMergeInFlight>(
            a.part_o + first_row * kNumHeads * kVDim, a.part_lse + first_row * kNumHeads, w.splits, w.split, kBase2,
            a.out + token * kNumHeads * kVDim, a.lse != nullptr ? a.lse + token * kNumHeads : nullptr, *scratch,
            kConsumerThreads, [] { consumer_sync(); });
        consumer_sync();  // the scratch is the next token's
      }
      stamp(StampPoint::merged, tokens_done == 0);
      ++tokens_done;
    };
    finish_token(std::integral_constant<int, 0>{});
    static_assert(kMaxPack <= 2, "the tile loop and the epilogue take tokens 0 and 1 of a group");
    if constexpr (Pack > 1)
      if (group > 1) finish_token(std::integral_constant<int, 1>{});
  }
  stamp(StampPoint::exit);
  stamp(StampPoint::exit_ns);
}

template <std::size_t I, bool Chunked, bool Fused, int Pack = 1>
constexpr auto kKernel =
    hopper_attention_kernel<kInstances[I].kv, kInstances[I].p, kInstances[I].base, Chunked, Fused, Pack>;

// Above 48 KB a kernel must opt in; once per kernel (a runtime call, legal during capture).
template <std::size_t I, bool Chunked, bool Fused, int Pack = 1>
void opt_in() {
  static const bool opted_in = [] {
    MLACHECK_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kKernel<I, Chunked, Fused, Pack>),
                                           hipFuncAttributeMaxDynamicSharedMemorySize,
                                           kPlan<kInstances[I].kv, Fused, Pack, kInstances[I].p>.bytes));
    return true;
  }();
  static_cast<void>(opted_in);
}

template <std::size_t I, bool Chunked, bool Fused, int Pack>
void launch_kernel(const AttentionArgs& args, const KvMaps& maps, int64_t blocks, common::KernelStart start,
                   hipStream_t stream) {
  constexpr common::Instance in = kInstances[I];
  constexpr int kSharedBytes = kPlan<in.kv, Fused, Pack, in.p>.bytes;
  static_assert(plan_fits(kPlan<in.kv, Fused, Pack, in.p>, in.kv != problem::KvFormat::bf16),
                "the instance's shared-memory plan exceeds sm_90's 227 KB or misaligns");
  opt_in<I, Chunked, Fused, Pack>();
  // A fused kernel's clusters are a request's num_splits blocks.
  const common::LaunchShape shape{dim3(static_cast<unsigned>(blocks)), dim3(kThreads<in.kv, Pack>),
                                  static_cast<std::size_t>(kSharedBytes),
                                  Fused ? static_cast<unsigned>(args.num_splits) : 0u};
  common::launch_kernel(kKernel<I, Chunked, Fused, Pack>, shape, stream, start, args, maps);
}

template <std::size_t I, int Pack>
void launch_packed(const AttentionArgs& args, const KvMaps& maps, int64_t blocks, bool fused,
                   common::KernelStart start, hipStream_t stream) {
  if (fused) return launch_kernel<I, false, true, Pack>(args, maps, blocks, start, stream);
  if (args.item_start != nullptr) launch_kernel<I, true, false, Pack>(args, maps, blocks, start, stream);
  else launch_kernel<I, false, false, Pack>(args, maps, blocks, start, stream);
}

// packed: the bf16 kernel that takes kMaxPack tokens of a request at a time (gpu/hopper/launch.cpp
// asks for it where some q_len > 1); else the one-token kernel, whose registers and shared memory
// hold one token's state.
template <std::size_t I>
void launch_instance(const AttentionArgs& args, const KvMaps& maps, int64_t blocks, bool fused, bool packed,
                     common::KernelStart start, hipStream_t stream) {
  if constexpr (kInstances[I].kv == problem::KvFormat::bf16) {
    if (packed) return launch_packed<I, kMaxPack>(args, maps, blocks, fused, start, stream);
  }
  if (packed) throw std::logic_error("hopper: packed tokens are compiled for bf16 caches only");
  launch_packed<I, 1>(args, maps, blocks, fused, start, stream);
}

template <std::size_t... I>
void dispatch(std::size_t instance, const AttentionArgs& args, const KvMaps& maps, int64_t blocks, bool fused,
              bool packed, common::KernelStart start, hipStream_t stream, std::index_sequence<I...>) {
  ((instance == I ? launch_instance<I>(args, maps, blocks, fused, packed, start, stream) : void()), ...);
}

void launch(std::size_t instance, const AttentionArgs& args, int64_t blocks, bool fused, bool packed,
            common::KernelStart start, StreamHandle stream) {
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
  dispatch(instance, args, maps, blocks, fused, packed, start, static_cast<hipStream_t>(stream),
           std::make_index_sequence<kInstances.size()>());
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace

bool launch_attention(std::size_t instance, const AttentionArgs& args, int64_t blocks, StreamHandle stream, common::KernelStart start) {
  launch(instance, args, blocks, false, false, start, stream);
  return false;
}

bool launch_attention_fused(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                            StreamHandle stream, common::KernelStart start) {
  launch(instance, args, blocks, true, false, start, stream);
  return true;
}

bool launch_attention_packed(std::size_t instance, const AttentionArgs& args, int64_t blocks, StreamHandle stream, common::KernelStart start) {
  launch(instance, args, blocks, false, true, start, stream);
  return false;
}

bool launch_attention_fused_packed(std::size_t instance, const AttentionArgs& args, int64_t blocks,
                                   StreamHandle stream, common::KernelStart start) {
  launch(instance, args, blocks, true, true, start, stream);
  return true;
}

namespace {

// How many clusters of `splits` blocks of instance I's fused kernel run at once: asked of the
// runtime once per instance and split count (clusters of blocks of one SM's shared memory each must
// fit on a GPC). The packed kernel's blocks (384 threads, kPlan<bf16, true, kMaxPack>) hold one SM
// each too: the same clusters fit.
template <std::size_t I>
int fused_capacity(int splits) {
  constexpr common::Instance in = kInstances[I];
  // One block per SM (sm_90: 228 KB of shared memory an SM, 1 KB of it reserved per block).
  static_assert(2 * (kPlan<in.kv, true, 1, in.p>.bytes + 1024) > 233472 &&
                    (in.kv != problem::KvFormat::bf16 ||
                     2 * (kPlan<in.kv, true, kMaxPack, in.p>.bytes + 1024) > 233472),
                "the fused kernels hold one SM a block, packed or not");
  static int capacity[sm90::kMaxClusterSplits + 1] = {};  // 0 unknown, -1 none
  int& known = capacity[splits];
  if (known == 0) {
    opt_in<I, false, true>();
    const common::NvidiaLaunchConfig launch(
        common::LaunchShape{dim3(static_cast<unsigned>(splits)), dim3(kThreads<in.kv>),
                            static_cast<std::size_t>(kPlan<in.kv, true, 1, in.p>.bytes), static_cast<unsigned>(splits)},
        nullptr, common::KernelStart::after_previous);
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kKernel<I, false, true>, &launch.config);
    known = e == cudaSuccess && clusters > 0 ? clusters : -1;
    if (e != cudaSuccess) static_cast<void>(cudaGetLastError());  // a refusal is an answer, not an error
  }
  return known > 0 ? known : 0;
}

template <std::size_t... I>
int fused_capacity_of(std::size_t instance, int splits, std::index_sequence<I...>) {
  int capacity = 0;
  ((instance == I ? static_cast<void>(capacity = fused_capacity<I>(splits)) : void()), ...);
  return capacity;
}

}  // namespace

static_assert(kClusterMergeMaxSplits == sm90::kMaxClusterSplits, "merge_choice.h's split counts are the merge's");

int cluster_merge_capacity(std::size_t instance, int splits) {
  if (!cluster_merge_takes(splits) || instance >= kInstances.size()) return 0;
  return fused_capacity_of(instance, splits, std::make_index_sequence<kInstances.size()>());
}

}  // namespace mlacheck::gpu::hopper

#if defined(MLACHECK_HOPPER_STAMPS)
namespace mlacheck::gpu {

void reset_kernel_stamps(StreamHandle stream) {
  void* stamps = nullptr;
  MLACHECK_GPU_CHECK(cudaGetSymbolAddress(&stamps, hopper::g_kernel_stamps));
  MLACHECK_GPU_CHECK(cudaMemsetAsync(stamps, 0, sizeof(hopper::g_kernel_stamps), static_cast<cudaStream_t>(stream)));
}

std::vector<uint64_t> read_kernel_stamps(StreamHandle stream) {
  std::vector<uint64_t> out(static_cast<std::size_t>(kStampBlocks) * kStampPoints);
  static_assert(sizeof(hopper::g_kernel_stamps) == sizeof(uint64_t) * kStampBlocks * kStampPoints);
  MLACHECK_GPU_CHECK(cudaMemcpyFromSymbolAsync(out.data(), hopper::g_kernel_stamps, sizeof(hopper::g_kernel_stamps), 0,
                                               cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)));
  MLACHECK_GPU_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return out;
}

}  // namespace mlacheck::gpu
#endif
