#pragma once
// A model of how an sm_90 tensor core sums fp8 x fp8 products (wgmma ... .f32.e4m3.e4m3), for the
// recipes whose fp8 products declare it (problem/recipe.h Fp8Accumulation). NVIDIA does not
// document it. docs/probes/fp8_accumulation.cu measured it on an H100 and an H200 (2026-12-05) and
// docs/probes/fp8_accumulation_fit.py found kSm90Fp8Mma below to reproduce every one of their
// 524 288 and 655 360 outputs bit for bit: a K step's 32 products and C aligned at the largest exponent among them, a
// product's exponent being the sum of its factors' exponents (its significand, a product of two in
// [1, 2), may reach [2, 4): the "around 14 bits" DeepSeek-V3's report, section 3.3.2, measured on
// H800), each cut to 13 bits below it toward zero, the sum kept to 13 mantissa bits, truncated (an
// FP22 accumulator, as SageAttention2 describes it). The same fit put the public description's
// reading, a product aligned at its own exponent, at 78 %.
// examples/fp8_tensorcore.py is the same model in NumPy, written separately (the gate's CTest
// cli.fp8_tensorcore_gate runs a kernel on it against this emulation).
#include <cstdint>

namespace mlacheck::ref {

struct Fp8MmaModel {
  int bits;            // bits kept below the largest exponent of a K step's terms
  int final_bits;      // mantissa bits the accumulator keeps after each K step
  bool align_c;        // the incoming accumulator takes part in the alignment
  bool toward_floor;   // aligned terms are cut toward -inf (two's complement), else toward zero
  bool final_nearest;  // the accumulator rounds to nearest even, else truncates
  int group;           // products aligned together, in K order (a K step of 32 may add smaller groups)
  bool align_by_factors;    // a product aligns at its factors' exponents summed, else at its own
  int factor_min_exponent;  // with align_by_factors, a factor's exponent is at least this (-6: an
                            // e4m3 subnormal's field; INT_MIN: a subnormal's own exponent)
};

// e4m3's smallest normal exponent (1 - bias 7): where its subnormals' exponent field points.
inline constexpr int kE4m3MinExponent = -6;

// Products per output in one m64nNk32 e4m3 instruction (PTX ISA, "Matrix shape" of wgmma).
inline constexpr int kFp8MmaKStep = 32;

// The measured model (the fit above). A subnormal factor aligns at its field's exponent, -6: the
// H200's 128 trials of subnormal factors, all reproduced, against 93 % aligned at its own.
inline constexpr Fp8MmaModel kSm90Fp8Mma{.bits = 13, .final_bits = 13, .align_c = true,
                                         .toward_floor = false, .final_nearest = false,
                                         .group = kFp8MmaKStep, .align_by_factors = true,
                                         .factor_min_exponent = kE4m3MinExponent};

// C plus the n products a[k]·b[k] (fp8 values: each product, of at most 8 significant bits, is
// exact in float) in groups of model.group (1 .. 64; K steps of 32 by default), the last one
// padded with zeros. A group's terms are integers in units of 2^(E - bits) below 2^(bits + 2), so
// their sum is exact; the kept result has at most final_bits + 1 <= 24 significant bits, exact in
// float. Throws std::invalid_argument for a group outside 1 .. 64 or bits outside 1 .. 44.
float fp8_mma_accumulate(float c, const float* a, const float* b, int64_t n, const Fp8MmaModel& model);

// The same sums under kSm90Fp8Mma for operands decoded once and reused by many sums (the
// emulation's K row by 16 heads, Q by every key, V by 16 heads, P by 512 columns): the e4m3fn values,
// each with its alignment exponent, max(floor(log2 |x|), -6), or kZeroFactorExponent for ±0 (the
// model leaves zero products out of the alignment). Below any real exponent sum (-12 .. 16) even
// when added to the largest (8), and twice it still fits in int.
inline constexpr int32_t kZeroFactorExponent = -(1 << 20);

// exponent[i] of x[i] for i < n, through quant's e4m3fn codec. False when some x[i] is not a finite
// e4m3fn value (NaN, off the grid): only fp8_mma_accumulate is defined for such operands.
bool e4m3_factor_exponents(const float* x, int64_t n, int32_t* exponent);

// Sums of this form side by side (Q·Kᵀ: a key's 16 heads; P·V: 16 of the 512 columns, for the
// four SSE2 vectors of the baseline x86-64 target).
inline constexpr int kFp8MmaLanes = 16;

// For j < kFp8MmaLanes, c[j] = fp8_mma_accumulate(c[j], a, b_j, n, kSm90Fp8Mma), bit for bit, where
// a holds a[k * a_stride] and b_j b[k * ldb + j] (k < n), with their exponents at the same offsets in
// a_exponent and b_exponent, all accepted by e4m3_factor_exponents. No decoding per product: a K
// step's alignment is a maximum of integers, and each term one float32 to int32 conversion
// (ref/fp8_mma.cpp, e4m3_step, says why each is exact), vectorized across the lanes.
void fp8_mma_accumulate_e4m3(float* c, const float* a, const int32_t* a_exponent, int64_t a_stride,
                             const float* b, const int32_t* b_exponent, int64_t ldb, int64_t n);

}  // namespace mlacheck::ref
