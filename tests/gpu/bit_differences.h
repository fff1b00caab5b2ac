#pragma once
// How many output elements (bf16 bits) and LSE entries (float bits: NaN payloads, signed zeros
// count) differ between two results of the same decode: the GPU tests that demand the same bits
// from two runs (two merges, two launches of one kernel) count them alike (expect_same_bits checks
// the sizes first; the callers of bit_differences check them themselves).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include <gtest/gtest.h>

namespace mlacheck::gpu::test {

struct BitDifferences {
  std::size_t out = 0, lse = 0;
};

inline BitDifferences bit_differences(std::span<const uint16_t> out_a, std::span<const uint16_t> out_b,
                                      std::span<const float> lse_a, std::span<const float> lse_b) {
  BitDifferences d;
  for (std::size_t i = 0; i < out_a.size() && i < out_b.size(); ++i) d.out += out_a[i] != out_b[i];
  for (std::size_t i = 0; i < lse_a.size() && i < lse_b.size(); ++i)
    d.lse += std::memcmp(&lse_a[i], &lse_b[i], sizeof(float)) != 0;
  return d;
}

// The checks of two results that must have the same bits: the same sizes, no element different.
inline void expect_same_bits(std::span<const uint16_t> out_a, std::span<const uint16_t> out_b,
                             std::span<const float> lse_a, std::span<const float> lse_b) {
  ASSERT_EQ(out_a.size(), out_b.size());
  ASSERT_EQ(lse_a.size(), lse_b.size());
  const BitDifferences d = bit_differences(out_a, out_b, lse_a, lse_b);
  EXPECT_EQ(d.out, 0u) << "output elements that differ";
  EXPECT_EQ(d.lse, 0u) << "LSE entries that differ";
}

}  // namespace mlacheck::gpu::test
