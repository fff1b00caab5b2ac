#pragma once
// The Hopper attention kernel's consumer steps: the reductions of the softmax step across a
// warpgroup, Oᵀ's rescaling, and the products Sᵀ = K Qᵀ and Oᵀ = Vᵀ Pᵀ on warpgroup MMA
// (gpu/hopper/attention.hip).
// Included by gpu/hopper/attention.hip only: its device code, in the anonymous namespace of that one
// translation unit.
#include <cstdint>

#include "gpu/hopper/sync.h"
#include "gpu/hopper/traits.h"
#include "gpu/sm90/wgmma.h"
#include "gpu/warp.h"

namespace mlacheck::gpu::hopper {
namespace {

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

// Where P·V's A operand (V of the tile) lies: the copy engine's bf16 tile, a row per key, read
// MN-major; or the decoded kernels' Vᵀ tile (traits.h ValueTile), a row per dim, read K-major.
enum class ValueLayout { key_rows, dim_rows };

// SkipOnes: rescale_outputs'.
template <int Chunks, ValueLayout Layout, sm90::WgOperand Operand = sm90::WgOperand::bf16, bool SkipOnes = false>
__device__ __forceinline__ void issue_pv(Acc (&o)[Chunks], const float (&alpha)[4], const unsigned char* kv,
                                         const unsigned char* p, int first_chunk) {
  constexpr sm90::MnMajorLayout kPLayout{kNumHeads};
  constexpr bool kKeyRows = Layout == ValueLayout::key_rows;
  rescale_outputs<SkipOnes>(o, alpha);
  const uint64_t v_desc = kKeyRows ? sm90::smem_descriptor_sw128(kv, KvTile::kLeading, KvTile::kStride)
                                   : sm90::smem_descriptor_sw128(kv, ValueTile::kKMajorLeading, ValueTile::kStride);
  const uint64_t p_desc = sm90::smem_descriptor(p, kPLayout.leading_bytes(), kPLayout.stride_bytes());
#pragma unroll
  for (int v = 0; v < Chunks; ++v) sm90::wgmma_fence_operand(o[v]);
  sm90::wgmma_fence();
#pragma unroll
  for (int v = 0; v < Chunks; ++v)
#pragma unroll
    for (int k = 0; k < kPvSteps; ++k) {
      const int k0 = k * sm90::kWgK16;
      const int chunk = first_chunk + v;
      const int v_start = kKeyRows ? KvTile::mn_major_start(chunk * sm90::kWgM, k0)
                                   : ValueTile::k_major_start(chunk * ValueTile::kBoxDims + k0);
      sm90::wgmma_m64n16k16<kKeyRows, true, Operand>(o[v], sm90::descriptor_advance(v_desc, v_start),
                                                      sm90::descriptor_advance(p_desc, kPLayout.offset_bytes(k0, 0)),
                                                      true);
    }
  sm90::wgmma_commit();
}

// P·V's e4m3 products of one tile into `acc` (Vᵀ from the e4m3 value tile, P as e4m3 codes, both in
// e4m3_layout(), traits.h), two K steps of 32 keys per chunk of 64 dims: half the products of
// issue_pv's 16-bit form, each reading half the bytes of its operands. onto: the first K step adds
// to acc, else it overwrites. Committed, not waited.
template <int Chunks>
__device__ __forceinline__ void e4m3_pv_products(Acc (&acc)[Chunks], const unsigned char* vt, const unsigned char* p,
                                                 bool onto) {
  const uint64_t v_desc = sm90::smem_descriptor(vt, e4m3_layout().leading_bytes(), e4m3_layout().stride_bytes());
  const uint64_t p_desc = sm90::smem_descriptor(p, e4m3_layout().leading_bytes(), e4m3_layout().stride_bytes());
#pragma unroll
  for (int v = 0; v < Chunks; ++v) sm90::wgmma_fence_operand(acc[v]);
  sm90::wgmma_fence();
#pragma unroll
  for (int v = 0; v < Chunks; ++v)
#pragma unroll
    for (int k = 0; k < kE4m3PvSteps; ++k) {
      const int k0 = k * sm90::kWgK32;
      sm90::wgmma_m64n16k32_e4m3(acc[v], sm90::descriptor_advance(v_desc, e4m3_layout().offset_bytes(v * sm90::kWgM, k0)),
                                 sm90::descriptor_advance(p_desc, e4m3_layout().offset_bytes(0, k0)), onto || k > 0);
    }
  sm90::wgmma_commit();
}

// issue_pv on the e4m3 product (the all-fp8 recipes, kE4m3Pv), chained: Oᵀ rescaled, then the
// products accumulate onto it (config.h kE4m3PromoteOutputs false).
template <int Chunks>
__device__ __forceinline__ void issue_pv_e4m3(Acc (&o)[Chunks], const float (&alpha)[4], const unsigned char* vt,
                                              const unsigned char* p) {
  rescale_outputs<true>(o, alpha);
  e4m3_pv_products(o, vt, p, true);
}

// The same products into fresh accumulators `tile`, no rescale: a tile's P·V whose sums the caller
// adds to Oᵀ in float32 once they are done, so that the tensor core's own accumulation (13 bits
// below a K step's largest term: ref/fp8_mma.h, measured) sums one tile's two K steps, not a split's.
template <int Chunks>
__device__ __forceinline__ void issue_pv_e4m3_fresh(Acc (&tile)[Chunks], const unsigned char* vt, const unsigned char* p) {
  e4m3_pv_products(tile, vt, p, false);
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

}  // namespace
}  // namespace mlacheck::gpu::hopper
