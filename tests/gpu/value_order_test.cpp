// The decoded hopper kernels' value order (gpu/hopper/value_order.h): its promises checked on the
// host, each against an order that breaks it.
#include "gpu/hopper/value_order.h"

#include <gtest/gtest.h>

#include <set>

namespace mlacheck::gpu::hopper {
namespace {

// The 8 dims one stmatrix .trans matrix stores (K step j, column half h of the A fragment) meet 8
// different swizzle chunks of their Vᵀ rows (row % 8) under `row_of`.
template <class RowOf>
bool stored_matrices_meet_eight_chunks(RowOf row_of) {
  for (int j = 0; j < 4; ++j)
    for (int h = 0; h < 2; ++h) {
      std::set<int> chunks;
      for (int i = 0; i < 8; ++i) chunks.insert(row_of(decoded_box_dim(16 * j + 8 * h + i)) % 8);
      if (chunks.size() != 8) return false;
    }
  return true;
}

TEST(ValueOrder, DecodedOrderIsAPermutationOfAdjacentPairs) {
  std::set<int> dims;
  for (int p = 0; p < kValueBoxDims; ++p) {
    dims.insert(decoded_box_dim(p));
    if (p % 2 == 1) {
      EXPECT_EQ(decoded_box_dim(p), decoded_box_dim(p - 1) + 1) << p;
    }
  }
  EXPECT_EQ(dims.size(), static_cast<std::size_t>(kValueBoxDims));
  EXPECT_EQ(*dims.rbegin(), kValueBoxDims - 1);
}

TEST(ValueOrder, RowsAndDimsAreInverse) {
  std::set<int> rows;
  for (int dim = 0; dim < kValueBoxDims; ++dim) {
    const int row = value_row(dim);
    ASSERT_GE(row, 0);
    ASSERT_LT(row, kValueBoxDims);
    rows.insert(row);
    EXPECT_EQ(value_dim(row), dim) << dim;
  }
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kValueBoxDims));
}

// A warp's Oᵀ rows 8 k .. 8 k + 7 of a head are one aligned 8-dim block: one whole 32-byte sector.
TEST(ValueOrder, EachGroupOfEightRowsIsOneAlignedDimBlock) {
  for (int group = 0; group < kValueBoxDims / kDimBlock; ++group)
    for (int o = 0; o < kDimBlock; ++o)
      EXPECT_EQ(value_dim(kDimBlock * group + o) / kDimBlock, group) << group << " " << o;
  // The K order itself is not: its rows 0..7 hold dims 16 apart.
  EXPECT_NE(decoded_box_dim(2) / kDimBlock, decoded_box_dim(0) / kDimBlock);
}

TEST(ValueOrder, EveryStoredMatrixMeetsEightSwizzleChunks) {
  EXPECT_TRUE(stored_matrices_meet_eight_chunks([](int dim) { return value_row(dim); }));
  // Rows in plain dim order would put each matrix's 8 rows on 2 chunks: a 4-way bank conflict.
  EXPECT_FALSE(stored_matrices_meet_eight_chunks([](int dim) { return dim; }));
}

}  // namespace
}  // namespace mlacheck::gpu::hopper
