#pragma once
// Independent reference encoders for the codec tests. They share no code with quant/: values come
// from the format definitions (std::ldexp in double) and rounding is a nearest-value search over
// every code, with the tie and overflow rules applied as separate steps. A bug would have to be
// made twice, in two different algorithms, to go unnoticed.
#include <cstdint>

#include "quant/formats.h"

namespace mlacheck::quant::testing {

// Value of an FP8 code by the textbook formula (NUMERICS §3.1); NaN for the NaN codes.
double ref_fp8_value(uint8_t code, Fp8Format f);

// Nearest FP8 code to x with ties to the even mantissa. Rounding past the max is detected by also
// searching the first grid point beyond it (e4m3fn 480, e4m3fnuz 256); such values and ±Inf are
// overflow: NaN (Overflow::nan) or ±max (saturate). NaN -> e4m3fn 0x7F|sign, e4m3fnuz 0x80;
// e4m3fnuz zero is always 0x00.
uint8_t ref_fp8_encode(float x, Fp8Format f, Overflow o);

// E2M1 magnitudes by code 0..7 (NUMERICS §5.7): 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 = sign.
double ref_e2m1_value(uint8_t code);

// E2M1 code of a non-NaN qx: nearest value, ties to the even mantissa (rne) or away from zero
// (ties_away), saturating at 6; sign in bit 3 also for zero. For ties_away and |qx| < 2^-32 the
// AMD shift-count-mod-32 result, written from NUMERICS §5.3's description rather than the
// kernel's bit operations.
uint8_t ref_e2m1_encode(float qx, E2M1Rounding r);

// MXFP4 block exponent from amax >= 0 via frexp (NUMERICS §5.2): round amax up to the next power
// of two iff its significand is >= 1.75, treat a power of two beyond the float32 range as +Inf,
// then e = clamp(log2 r - 2, -127, 127).
int ref_block_exponent(float amax);

}  // namespace mlacheck::quant::testing
