#pragma once
// The Hopper attention kernel's decoded rows: fp8 and MXFP4 codes loaded by a tile's owner, decoded
// to 16-bit operands in registers for Sᵀ = K Qᵀ and stored as its value tile, and Q staged in the
// same order; for the all-fp8 recipes the codes themselves as the e4m3 product's operands (qk_e4m3)
// (gpu/hopper/attention.hip).
// Included by gpu/hopper/attention.hip only: its device code, in the anonymous namespace of that one
// translation unit.
#include <cstdint>

#include "gpu/common/operand_decode.h"
#include "gpu/common/operands.h"
#include "gpu/common/rounding.h"
#include "gpu/hopper/products.h"
#include "gpu/hopper/sync.h"
#include "gpu/hopper/traits.h"
#include "gpu/hopper/value_order.h"
#include "gpu/sm90/wgmma.h"

namespace mlacheck::gpu::hopper {
namespace {

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

// How qk_decoded reads the rows of a part: Codes, this thread's share of the part; kF16Values,
// whether the value tile holds V rounded to f16 (a4w4) rather than the decoded bf16 pairs;
// load<Count> (boxes first .. first + Count - 1 into Codes); decode (one box's bf16 pairs, lo[r][j]
// holding dims 16 t + 4 j, + 1 of row g + 8 r and hi[r][j] dims 16 t + 4 j + 2, + 3). fp8:
// load_boxes, then decode_box (a16w8; the all-fp8 recipes' qk_e4m3 loads and releases through it
// and decodes nothing).
struct Fp8Rows {
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
    decode_box(codes[b], lo, hi);
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

// One value box of this thread's codes (rows g and g + 8 of its warp's 16, dims 64 b + 16 t .. + 15:
// load_boxes) into the e4m3 value tile (traits.h e4m3_layout). Word i of row g and word i of row g + 8 make two registers of
// 16-bit elements by byte permutes, dim 16 t + 4 i + 2 h + c's pair (row g's code low) in half c of
// register (i, h); as matrix 2 i + h of a stmatrix .trans those elements lie in column 2 t + c, row
// g, so memory row 2 t + c of the matrix gets that dim's codes of the warp's 16 keys in
// e4m3_key_position's order. The matrix's 8 rows are box positions 16 i + 8 h + 2 t + c, whose dims
// are decoded_box_dim's; each goes to its dim's Vᵀ row, value_row (value_order.h), as qk_decoded's
// bf16 value rows do. rows_address[s]: this lane's row (lane % 8) of matrix lane / 8 of stmatrix s
// (s = 0: box positions 0 .. 31; s = 1: 32 .. 63), in box 0.
__device__ __forceinline__ void store_e4m3_value_box(const uint4 (&w)[2], const uint32_t (&rows_address)[2],
                                                     uint32_t box_offset) {
  const uint32_t g_row[4] = {w[0].x, w[0].y, w[0].z, w[0].w};
  const uint32_t g8_row[4] = {w[1].x, w[1].y, w[1].z, w[1].w};
  uint32_t m[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // Bytes 0 .. 3 are row g's word, 4 .. 7 row g + 8's: (g d0, g+8 d0, g d1, g+8 d1) and the same
    // for d2, d3.
    asm("prmt.b32 %0, %1, %2, 0x5140;\n" : "=r"(m[2 * i]) : "r"(g_row[i]), "r"(g8_row[i]));
    asm("prmt.b32 %0, %1, %2, 0x7362;\n" : "=r"(m[2 * i + 1]) : "r"(g_row[i]), "r"(g8_row[i]));
  }
  sm90::stmatrix_trans_x4(rows_address[0] + box_offset, m[0], m[1], m[2], m[3]);
  sm90::stmatrix_trans_x4(rows_address[1] + box_offset, m[4], m[5], m[6], m[7]);
}

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
  // stmatrix .trans's row of this lane in box 0 for each K step j: lane 8 m + i stores column i of
  // matrix m of the fragment (keys 8 (m % 2) .. + 7 of the warp's 16, fragment column 8 (m / 2) + i),
  // i.e. that column's dim, into the dim's Vᵀ row (value_row) at the warp's key chunk.
  uint32_t value_rows[4];
  {
    const int matrix = lane / 8;
    const int key_chunk = 2 * warp + matrix % 2;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int row = value_row_at(kDecodedKStep * j + 8 * (matrix / 2) + lane % 8);
      value_rows[j] = static_cast<uint32_t>(__cvta_generic_to_shared(vtile)) +
                      static_cast<uint32_t>(ValueTile::chunk_offset_bytes(row, key_chunk));
    }
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
      // The value box: each fragment stored transposed (stmatrix .trans), a row of Vᵀ per dim, in
      // value_row's places: Oᵀ's rows come out as whole 8-dim blocks (value_order.h), and the
      // registers go out as the products hold them. (Stored as rows of 16 consecutive dims of V, each
      // word had to be moved or selected into place: 128 selects a tile.)
      // a4w4 (Rows::kF16Values): V rounded to f16, P·V's operand type (exact for scales 104..140).
      const auto store = [&](const sm90::WgFragA64x16& x, int j) {
        sm90::stmatrix_trans_x4(value_rows[j] + b * ValueTile::kBoxBytes, x.x[0], x.x[1], x.x[2], x.x[3]);
      };
      if constexpr (Rows::kF16Values) {
        sm90::WgFragA64x16 halves[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int k = 0; k < 4; ++k) halves[j].x[k] = common::bf16_pair_to_f16_pair(f[j].x[k]);
#pragma unroll
        for (int j = 0; j < 4; ++j) store(halves[j], j);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) store(f[j], j);
      }
    }
#pragma unroll
    for (int c = 0; c < 2; ++c) sm90::wgmma_fence_operand(*chain[c]);
    sm90::wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j)
      sm90::wgmma_m64n16k16_rs<sm90::WgOperand::bf16>(
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

// Sᵀ = K Qᵀ of an fp8 tile on the e4m3 product (the all-fp8 recipes, with P·V on it too: kE4m3Pv),
// K straight from this thread's codes as wgmma's register A operand (WgFragA64x32e4m3: no
// conversion), two K steps of 32 per box: K step h of box b takes words 2 h and 2 h + 1 of the
// thread's 16 codes of each row, dims 16 t + 8 h .. + 3 and + 4 .. + 7, in the fragment's columns
// 4 t .. and 16 + 4 t .. (e4m3_qk_dim: Q is staged in that order). The value boxes go to the e4m3
// value tile from the same codes (store_e4m3_value_box); rows past n as zero codes. The loads, the
// part's release and the wait for this warpgroup's previous P·V as qk_decoded's. Box b's codes are
// kept until its products are done. kE4m3PromoteScores (config.h): each box's two products go into
// a fresh accumulator (sums[b % 3]), three boxes in flight: box b - 3's are waited at box b
// (wgmma_wait<2>), its codes released and its sums added to s in float32 (the last three after the
// loop), in box order (two in flight: the a8w8 tile 0.4-0.5 % slower in the one call that compared
// them, device call 12 of 2026-12-06's twenty-third session); else K step h of every box
// accumulates onto sums[h] (two chains: consecutive products independent), two boxes in flight,
// and s is their sum.
// after_pv: called once this warpgroup's previous P·V is done (its products waited here, with the
// first codes' loads in flight), before anything of this tile's products: where the kernel adds that
// P·V's fresh sums to Oᵀ (attention.hip), so that they need not be waited at the end of their tile.
template <class AfterPv>
__device__ __forceinline__ void qk_e4m3(Acc& s, const unsigned char* part, Barrier* empty, const unsigned char* sq,
                                        unsigned char* vtile, int n, int warp, int lane, uint32_t drain,
                                        AfterPv&& after_pv) {
  using Rows = Fp8Rows;
  typename Rows::Codes codes;
  Rows::load<kLoadBatch>(codes, 0, part, 0, lane);
  sm90::wgmma_wait<0>();  // this warpgroup's previous P·V reads the value tile rewritten below
  after_pv();
  const uint64_t q_desc = sm90::smem_descriptor(sq, e4m3_q_layout().leading_bytes(), e4m3_q_layout().stride_bytes());
  const int row0 = warp * kFp8PartRows + lane / 4;  // tile rows row0 and row0 + 8
  uint32_t e4m3_rows[2];  // store_e4m3_value_box's: box position lane (+ 32) in its dim's Vᵀ row
#pragma unroll
  for (int half = 0; half < 2; ++half)
    e4m3_rows[half] =
        static_cast<uint32_t>(__cvta_generic_to_shared(vtile)) +
        static_cast<uint32_t>(e4m3_layout().offset_bytes(value_row_at(32 * half + lane), warp * kFp8PartRows));
  constexpr int kInFlight = kE4m3PromoteScores ? 3 : 2;  // boxes whose products may be pending
  Acc sums[kInFlight];
  const auto promote = [&](int b) {  // kE4m3PromoteScores: box b's products are done, its sum into s
    sm90::wgmma_fence_operand(sums[b % kInFlight]);
#pragma unroll
    for (int l = 0; l < Acc::ne; ++l) s.x[l] = b == 0 ? sums[0].x[l] : s.x[l] + sums[b % kInFlight].x[l];
  };
  sm90::WgFragA64x32e4m3 frag[KvTile::kBoxes][2];
#pragma unroll
  for (int b = 0; b < KvTile::kBoxes; ++b) {
    if (b >= kInFlight) {
      sm90::wgmma_wait<kInFlight - 1>();  // box b - kInFlight's products are done: its codes may go
#pragma unroll
      for (int h = 0; h < 2; ++h) sm90::wgmma_fence_fragment(frag[b - kInFlight][h]);
      if constexpr (kE4m3PromoteScores) promote(b - kInFlight);
    }
    if (n < kTileKeys) {  // a split's last tile (a uniform branch): rows past its keys as zero codes
      if (row0 >= n) codes[b][0] = uint4{0u, 0u, 0u, 0u};
      if (row0 + 8 >= n) codes[b][1] = uint4{0u, 0u, 0u, 0u};
    }
    const uint32_t g_row[4] = {codes[b][0].x, codes[b][0].y, codes[b][0].z, codes[b][0].w};
    const uint32_t g8_row[4] = {codes[b][1].x, codes[b][1].y, codes[b][1].z, codes[b][1].w};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      frag[b][h].x[0] = g_row[2 * h];
      frag[b][h].x[1] = g8_row[2 * h];
      frag[b][h].x[2] = g_row[2 * h + 1];
      frag[b][h].x[3] = g8_row[2 * h + 1];
    }
    if (b < kValueBoxes)
      store_e4m3_value_box(codes[b], e4m3_rows,
                           static_cast<uint32_t>(b * (KvTile::kBoxDims / sm90::kCoreRows) * e4m3_layout().stride_bytes()));
#pragma unroll
    for (int c = 0; c < kInFlight; ++c) sm90::wgmma_fence_operand(sums[c]);
    sm90::wgmma_fence();
#pragma unroll
    for (int h = 0; h < 2; ++h)
      sm90::wgmma_m64n16k32_e4m3_rs(
          sums[kE4m3PromoteScores ? b % kInFlight : h], frag[b][h],
          sm90::descriptor_advance(q_desc, e4m3_q_layout().offset_bytes(0, b * KvTile::kBoxDims + h * sm90::kWgK32)),
          kE4m3PromoteScores ? h > 0 : b > 0);
    sm90::wgmma_commit();
    if (b % kLoadBatch == 0 && b + kLoadBatch < KvTile::kBoxes) {
      Rows::load<kLoadBatch>(codes, b + kLoadBatch, part, 0, lane);
      if (b + 2 * kLoadBatch >= KvTile::kBoxes) {  // the last batch: the part is free (qk_decoded's drain)
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(drain), "r"(Rows::pending(codes, b)) : "memory");
        __syncwarp();
        if (lane == 0) mma::bulk_barrier_arrive(empty);
        __syncwarp();
      }
    }
  }
  sm90::wgmma_wait<0>();
#pragma unroll
  for (int b = KvTile::kBoxes - kInFlight; b < KvTile::kBoxes; ++b) {
#pragma unroll
    for (int h = 0; h < 2; ++h) sm90::wgmma_fence_fragment(frag[b][h]);
    if constexpr (kE4m3PromoteScores) promote(b);
  }
  if constexpr (!kE4m3PromoteScores) {
#pragma unroll
    for (int c = 0; c < 2; ++c) sm90::wgmma_fence_operand(sums[c]);
#pragma unroll
    for (int l = 0; l < Acc::ne; ++l) s.x[l] = sums[0].x[l] + sums[1].x[l];
  }
}

// e4m3_qk_dim (gpu/hopper/e4m3_order.h): the dim at K position p of qk_e4m3's products.
static_assert(KvTile::kBoxDims == 64 && sm90::kWgK32 == 32, "e4m3_order.h's runs: a box, two K steps");

// decoded_box_dim (gpu/hopper/value_order.h): the dim at position p of a box in qk_decoded's K order.
static_assert(KvTile::kBoxDims == kValueBoxDims && sm90::kWgK16 == kDecodedKStep);
// The dim that qk_decoded's products read at position `slot` of Q's K-major row.
__device__ __forceinline__ int decoded_dim(int slot) {
  return slot / KvTile::kBoxDims * KvTile::kBoxDims + decoded_box_dim(slot % KvTile::kBoxDims);
}

// Q of `token` into QTile layout for qk_decoded, in decoded_dim's order: the token's 16 rows (18432
// bytes, contiguous and 16-byte aligned) by 16-byte asynchronous copies into `staging` (a value
// tile, free between tokens), all in flight at once, then a consumer barrier, then each 16-byte
// chunk of QTile gathered from its four pairs of dims. (4-byte asynchronous copies straight into
// decoded_dim's places, 18 a thread, had the a16w8 block's Q staged about 5000 cycles after the bf16
// block's on the same rows: H100, `bench --stamps`, device call 2 of 2026-12-06's eighteenth session.)
__device__ __forceinline__ void stage_q_fp8(const AttentionArgs& a, int64_t token, unsigned char* staging,
                                            unsigned char* sq, int tid) {
  constexpr int kRowBytes = kQkDim * 2;
  constexpr int kTokenBytes = kNumHeads * kRowBytes;  // 18432
  static_assert(kTokenBytes % 16 == 0 && kTokenBytes <= kFp8ValueBytes);
  const auto* q = reinterpret_cast<const unsigned char*>(a.q_bf16 + token * kNumHeads * kQkDim);
  for (int c = tid; c < kTokenBytes / 16; c += kConsumerThreads) copy_16(staging + 16 * c, q + 16 * c);
  copy_commit_and_wait_all();
  consumer_sync();
  constexpr int kChunksPerHead = kQkDim / 8;  // QTile's 16-byte chunks: 8 positions, 4 pairs
  for (int idx = tid; idx < kNumHeads * kChunksPerHead; idx += kConsumerThreads) {
    const int h = idx / kChunksPerHead, chunk = idx % kChunksPerHead;
    uint32_t pair[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      pair[k] = *reinterpret_cast<const uint32_t*>(staging + h * kRowBytes + decoded_dim(8 * chunk + 2 * k) * 2);
    *reinterpret_cast<uint4*>(sq + QTile::chunk_offset_bytes(h, chunk)) = uint4{pair[0], pair[1], pair[2], pair[3]};
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

// Q of `token` for qk_e4m3: the fp8 codes the Q quantization wrote (the token's 16 rows, 9216 bytes,
// contiguous and 16-byte aligned: the workspace's regions are), by 16-byte asynchronous copies into
// `staging` (a value tile, free between tokens), all in flight at once, then a consumer barrier,
// then moved 4 codes at a time into e4m3_q_layout() in e4m3_qk_dim's order (its groups of 4
// positions are 4 consecutive dims: one word each).
__device__ __forceinline__ void stage_q_e4m3_codes(const AttentionArgs& a, int64_t token, unsigned char* staging,
                                                   unsigned char* sq, int tid) {
  constexpr int kCodeBytes = kNumHeads * kQkDim;  // 9216
  static_assert(kCodeBytes % 16 == 0 && kCodeBytes <= kE4m3ValueRegionBytes);
  const uint8_t* codes = a.q_fp8 + token * kCodeBytes;
  for (int c = tid; c < kCodeBytes / 16; c += kConsumerThreads) copy_16(staging + 16 * c, codes + 16 * c);
  copy_commit_and_wait_all();
  consumer_sync();
  constexpr int kWordsPerHead = kQkDim / 4;
#pragma unroll 3
  for (int idx = tid; idx < kNumHeads * kWordsPerHead; idx += kConsumerThreads) {
    const int h = idx / kWordsPerHead, p = 4 * (idx % kWordsPerHead);
    *reinterpret_cast<uint32_t*>(sq + e4m3_q_layout().offset_bytes(h, p)) =
        *reinterpret_cast<const uint32_t*>(staging + h * kQkDim + e4m3_qk_dim(p));
  }
}

}  // namespace
}  // namespace mlacheck::gpu::hopper
