#pragma once
// The one table of element formats (like microxcaling mx/formats.py): exponent and mantissa
// widths, bias, how NaN/Inf are encoded and the largest finite value. The codecs in fp8.h and
// e2m1.h round and decode from these numbers; NUMERICS.md §3.1 and §5.7 are the source of each row.
#include <cstdint>

#include "quant/hd.h"

namespace mlacheck::quant {

// FP8 variant, named in the type (NUMERICS Decisions table): e4m3fn = OCP (gfx950, NVIDIA, the
// default), e4m3fnuz = gfx942 / MI300.
enum class Fp8Format : uint8_t { e4m3fn, e4m3fnuz };

// What an FP8 encoder does with a value that rounds past the max finite value (and with ±Inf):
// nan = torch 2.11's cast (NUMERICS §3.2/§3.3, the default); saturate = ±max like a hardware
// SATFINITE cvt. NaN stays NaN under both.
enum class Overflow : uint8_t { nan, saturate };

// E2M1 rounding of aiter's dynamic_mxfp4_quant (NUMERICS §5.3): rne = aiter >= 2026-03-17 (the
// default); ties_away = aiter 2025-10-28 ... 2026-03-17.
enum class E2M1Rounding : uint8_t { rne, ties_away };

// Every element format mlacheck encodes or decodes.
enum class ElemFormat : uint8_t { bf16, e4m3fn, e4m3fnuz, e2m1, e8m0 };

// How a format spends codes on NaN and Inf.
enum class NanEncoding : uint8_t {
  ieee,               // exponent all ones: Inf (mantissa 0) and NaN (mantissa != 0); bf16
  mantissa_all_ones,  // only s.1111.111 is NaN; no Inf; e4m3fn (0x7F, 0xFF)
  negative_zero,      // the -0 code 0x80 is the only NaN; no -0, no Inf; e4m3fnuz
  none,               // every code is a number; e2m1
  all_ones_code,      // 0xFF is NaN; unsigned, no zero; e8m0
};

struct FormatInfo {
  uint8_t exp_bits;
  uint8_t mant_bits;
  int16_t bias;
  NanEncoding nan;
  bool has_sign;
  float max_finite;
};

// The table. A switch rather than an array: a namespace-scope array is a host variable that CUDA
// device code may not read, a constexpr switch works everywhere.
MLACHECK_HD constexpr FormatInfo format_info(ElemFormat f) noexcept {
  switch (f) {
    case ElemFormat::bf16:  // §2; max 0x7F7F = (2 - 2^-7) * 2^127
      return {8, 7, 127, NanEncoding::ieee, true, 3.38953139e38f};
    case ElemFormat::e4m3fn:  // §3.1; max 0x7E = 1.75 * 2^8, since 0x7F is NaN
      return {4, 3, 7, NanEncoding::mantissa_all_ones, true, 448.0f};
    case ElemFormat::e4m3fnuz:  // §3.1; max 0x7F = 1.875 * 2^7
      return {4, 3, 8, NanEncoding::negative_zero, true, 240.0f};
    case ElemFormat::e2m1:  // §5.3/§5.7; max code 7 = 1.5 * 2^2
      return {2, 1, 1, NanEncoding::none, true, 6.0f};
    case ElemFormat::e8m0:  // §5.7; max 0xFE = 2^127
      return {8, 0, 127, NanEncoding::all_ones_code, false, 1.70141183e38f};
  }
  return {0, 0, 0, NanEncoding::none, false, 0.0f};  // unreachable for valid enumerators
}

MLACHECK_HD constexpr ElemFormat elem_format(Fp8Format f) noexcept {
  return f == Fp8Format::e4m3fnuz ? ElemFormat::e4m3fnuz : ElemFormat::e4m3fn;
}

}  // namespace mlacheck::quant
