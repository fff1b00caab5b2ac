#pragma once
// A model of how an sm_90 tensor core sums fp8 x fp8 products (wgmma ... .f32.e4m3.e4m3), for the
// recipes whose fp8 products declare it (problem/recipe.h Fp8Accumulation). NVIDIA does not
// document it; the model follows the public descriptions: DeepSeek-V3's report (section 3.3.2)
// measured that the fp8 GEMM on H800 keeps "around 14 bits", the products aligned to the largest
// exponent; SageAttention2 describes the accumulator as 1 + 8 + 13 bits (FP22), truncated.
// examples/fp8_tensorcore.py is the same model in NumPy, written separately (the gate's CTest
// cli.fp8_tensorcore_gate runs a kernel on it against this emulation); docs/probes/
// fp8_accumulation.cu measures the hardware and docs/probes/fp8_accumulation_fit.py fits the
// parameters below to it. Until that probe has run, kSm90Fp8Mma is an assumption, not a measurement.
#include <cstdint>

namespace mlacheck::ref {

struct Fp8MmaModel {
  int bits;            // bits kept below the largest exponent of a K step's terms
  int final_bits;      // mantissa bits the accumulator keeps after each K step
  bool align_c;        // the incoming accumulator takes part in the alignment
  bool toward_floor;   // aligned terms are cut toward -inf (two's complement), else toward zero
  bool final_nearest;  // the accumulator rounds to nearest even, else truncates
  int group;           // products aligned together, in K order (a K step of 32 may add smaller groups)
};

// Products per output in one m64nNk32 e4m3 instruction (PTX ISA, "Matrix shape" of wgmma).
inline constexpr int kFp8MmaKStep = 32;

// The public descriptions above: 13 bits (the narrower of "around 14" and FP22's 13 mantissa
// bits), C aligned with the products, cut toward zero, an FP22 accumulator truncated.
inline constexpr Fp8MmaModel kSm90Fp8Mma{.bits = 13, .final_bits = 13, .align_c = true,
                                         .toward_floor = false, .final_nearest = false,
                                         .group = kFp8MmaKStep};

// C plus the n products (exact values: an fp8 x fp8 product has at most 8 significant bits) in
// groups of model.group (1 .. 64; K steps of 32 by default), the last one padded with zeros. A
// group's terms are integers in units of 2^(E - bits) below 2^(bits + 1), so their sum is exact;
// the kept result has at most final_bits + 1 <= 24 significant bits, exact in float. Throws
// std::invalid_argument for a group outside 1 .. 64.
float fp8_mma_accumulate(float c, const float* products, int64_t n, const Fp8MmaModel& model);

}  // namespace mlacheck::ref
