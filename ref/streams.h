#pragma once
// The Philox streams of the generator (ref/random.h): one per thing drawn, so that no two tensors
// or decisions of a case share draws. The numbers are part of the data's definition: changing one
// changes every generated case (tests/ref/generate_test.cpp pins hashes).
#include <cstdint>

namespace mlacheck::ref::stream {

inline constexpr uint32_t kQ = 1;                // q elements
inline constexpr uint32_t kKv = 2;               // kv elements, by logical key
inline constexpr uint32_t kLengths = 3;          // ragged lengths
inline constexpr uint32_t kPages = 4;            // page permutation
inline constexpr uint32_t kPeakDirection = 5;    // peaked: per-request direction
inline constexpr uint32_t kPeakHot = 6;          // peaked: positions of the hot keys
inline constexpr uint32_t kOutlierChannels = 7;  // outliers: channels and factors
inline constexpr uint32_t kBoundaryQ = 8;        // boundary: q element kinds
inline constexpr uint32_t kBoundaryKv = 9;       // boundary: kv element kinds
inline constexpr uint32_t kBoundaryBlockQ = 10;  // boundary: q block maxima
inline constexpr uint32_t kBoundaryBlockKv = 11; // boundary: kv block maxima

}  // namespace mlacheck::ref::stream
