#pragma once
// Distances in units of the output format (bf16): how many representable bf16 values lie between
// two outputs, the spacing of bf16 at a value, and a histogram of distances.
#include <array>
#include <cstdint>
#include <string>

namespace mlacheck::check {

// bf16 bits on a monotonic integer line: +0 and -0 both map to 0, each step is one bf16 value.
// Meaningful for non-NaN patterns (±Inf sit one step past the largest finite value).
int32_t bf16_ordinal(uint16_t bits);

// Number of bf16 steps from a to b (0: the same value, ±0 equal). Not for NaN inputs.
uint32_t bf16_ulp_distance(uint16_t a, uint16_t b);

// Spacing of bf16 values in the binade of |x| (x finite): 2^(E - 7) for 2^E <= |x| < 2^(E+1),
// the subnormal spacing 2^-133 below the smallest normal.
double bf16_ulp(double x);

// Counts of bf16 ulp distances in power-of-two buckets: 0, 1, 2, 3-4, 5-8, ... The largest
// possible distance (-Inf to +Inf) is 2 * 0x7F80 < 2^16, so 18 buckets cover every pair.
struct UlpHistogram {
  static constexpr int kBuckets = 18;
  std::array<int64_t, kBuckets> count{};
  uint32_t max = 0;

  void add(uint32_t ulps);
  static int bucket(uint32_t ulps);
  static std::string label(int bucket);  // "0", "1", "2", "3-4", "5-8", ...
};

}  // namespace mlacheck::check
