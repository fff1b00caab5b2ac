#pragma once
// Where the decoded hopper kernels (a16w8, a16w4, a4w4 with bf16 or f16 P·V; the all-fp8 recipes with
// their e4m3 value tile alike) put a value box's dims: host and device, so that
// tests/gpu/value_order_test.cpp checks the orders' promises on the host.
//
// qk_decoded's K order (decoded_box_dim) comes from the decode: a thread holds 16 consecutive dims
// of its two rows (one 16-byte load of codes), so a K step's 16 columns are dims 16 apart. The
// value tile is Vᵀ, K-major (a row per dim, the tile's 64 keys along it, 128-byte swizzle), stored
// from the same A fragments by stmatrix .trans: each stored 16-byte row is one fragment column's
// dim, at a row the lane's address picks, so the rows need not follow the K order. They are placed
// by value_row: each aligned group of 8 rows holds one aligned block of 8 dims (a warp's Oᵀ row of
// a head then covers one whole 32-byte sector, stored from registers as the bf16 kernel's), the
// block's dims rotated by 2 (block / 2) so that the 8 dims one stmatrix matrix stores meet 8
// different swizzle chunks (no bank conflict).
#include "quant/hd.h"

namespace mlacheck::gpu::hopper {

inline constexpr int kValueBoxDims = 64;  // a value box: one 64-dim chunk of Oᵀ
inline constexpr int kDimBlock = 8;       // 8 float32 dims: a 32-byte sector
inline constexpr int kDecodedKStep = 16;  // a 16-bit wgmma's K step (sm90::kWgK16; decoded.h checks)

// The dim at position p (0..63) of a 64-dim box in qk_decoded's K order: K step j = p / 16, column
// κ = p % 16 of its A fragment holds dim 16 (κ % 8 / 2) + 4 j + 2 (κ / 8) + κ % 2, so each column
// pair is a pair of adjacent dims (the decode's bf16 pairs). Q is staged in this order.
MLACHECK_HD constexpr int decoded_box_dim(int p) {
  const int j = p / kDecodedKStep, col = p % kDecodedKStep;
  return 16 * (col % 8 / 2) + 4 * j + 2 * (col / 8) + col % 2;
}

// The Vᵀ row (0..63 within a box) that holds dim `dim` (0..63), and its inverse: Oᵀ's row r of a
// value chunk is dim value_dim(r).
MLACHECK_HD constexpr int value_row(int dim) {
  const int block = dim / kDimBlock;
  return kDimBlock * block + (dim % kDimBlock + 2 * (block / 2)) % kDimBlock;
}
// The Vᵀ row that position p of qk_decoded's K order goes to: where a stored fragment column lands.
MLACHECK_HD constexpr int value_row_at(int p) { return value_row(decoded_box_dim(p)); }
MLACHECK_HD constexpr int value_dim(int row) {
  const int block = row / kDimBlock;
  return kDimBlock * block + (row % kDimBlock + kDimBlock - 2 * (block / 2) % kDimBlock) % kDimBlock;
}

}  // namespace mlacheck::gpu::hopper
