#pragma once
// Rounding a float32 to the value grid of the narrow formats the emulated recipes pass through
// (P before P·V, V in the P·V operand type, split partials): RNE, by the codecs of quant/.
#include "problem/recipe.h"
#include "quant/formats.h"

namespace mlacheck::ref {

float round_to_bf16(float x);
// IEEE binary16: RNE, subnormals kept, past 65504 (after rounding) ±Inf, NaN stays NaN — what
// PyTorch's and Triton's .to(float16) do.
float round_to_f16(float x);
float round_to_fp8(float x, quant::Fp8Format f);  // overflow -> NaN (torch cast, NUMERICS §3)

// x rounded to `p` (f32: unchanged).
float round_to(problem::PFormat p, quant::Fp8Format f, float x);

}  // namespace mlacheck::ref
