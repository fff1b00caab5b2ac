#pragma once
// Deterministic test data from a counter-based generator (Random123 Philox4x32): element i of a
// stream depends only on (seed, i), so the data is the same on every run and thread count.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlacheck::quant::testing {

// 32 random bits for (seed, index).
uint32_t random_bits(uint64_t seed, uint64_t index);

// randn * 0.02 rounded to bf16, like the harness's inputs (NUMERICS §6.3), as bf16 bit patterns.
std::vector<uint16_t> random_bf16_normal(std::size_t n, uint64_t seed);

// Float32 data that makes rounding bugs visible: mostly bf16 normals of random magnitude, with
// about 1 % each of exact E2M1/FP8 ties (scaled by powers of two), float32 subnormals, ±0, NaN
// (both quiet and signalling payloads), ±Inf and values >= 2^127. Blocks of 32 get a common
// random scale so that the MXFP4 block exponents vary over the whole range.
std::vector<float> random_hostile_floats(std::size_t n, uint64_t seed);

}  // namespace mlacheck::quant::testing
