#pragma once
// Where the all-fp8 hopper kernels put the products of a run of 64 on the e4m3 product: host and
// device, so that the registry can hand the same orders to the emulation (gpu/registry.h Strategy's
// tc orders, ref EmulationOptions::tc_qk_order / tc_pv_order: with fp8-acc=tc64 which dims or keys
// share a K step of 32 changes the sums).
#include <array>

#include "quant/hd.h"

namespace mlacheck::gpu::hopper {

// The dim at K position p (0 .. 575) of qk_e4m3's products: box p / 64, K step h = p % 64 / 32 of
// it, column q = p % 32 of the step: dim 16 t + 8 h + 4 (q / 16) + q % 4 of the box, t = q % 16 / 4
// (a thread's A-fragment bytes of both steps come from one 16-byte run of K's row).
MLACHECK_HD constexpr int e4m3_qk_dim(int p) {
  const int box = p / 64, h = p % 64 / 32, q = p % 32;
  return box * 64 + 16 * (q % 16 / 4) + 8 * h + 4 * (q / 16) + q % 4;
}

// Where key `key` (0 .. 63) of a tile lies in a K-major row of the e4m3 value tile and of P: row g
// and row g + 8 of warp w's 16 (stmatrix .trans stores a pair of them as one 16-bit element) at
// bytes 2 g and 2 g + 1 of core-matrix column w.
MLACHECK_HD constexpr int e4m3_key_position(int key) {
  return 16 * (key / 16) + 2 * (key % 8) + (key % 16) / 8;
}

// The same as run orders (position -> dim or key of a run of 64), for the emulation.
constexpr std::array<int, 64> e4m3_qk_run_order() {
  std::array<int, 64> order{};
  for (int p = 0; p < 64; ++p) order[static_cast<std::size_t>(p)] = e4m3_qk_dim(p);
  return order;
}
constexpr std::array<int, 64> e4m3_pv_run_order() {
  std::array<int, 64> order{};
  for (int key = 0; key < 64; ++key) order[static_cast<std::size_t>(e4m3_key_position(key))] = key;
  return order;
}
inline constexpr std::array<int, 64> kE4m3QkRunOrder = e4m3_qk_run_order();
inline constexpr std::array<int, 64> kE4m3PvRunOrder = e4m3_pv_run_order();

}  // namespace mlacheck::gpu::hopper
