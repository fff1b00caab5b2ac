#pragma once
// Cache and Q codes to the 16-bit operands of the kernels' products, exactly, with few
// instructions: the one e4m3 and E2M1 decode of every family (the decode runs once per element of
// every tile and competes with the products for issue slots). Each fast path is exact on the inputs
// it takes and hands the rest (NaN codes, block scales whose products leave float32's normal range)
// to an exact slow path, so every result has the bits of bf16(quant::fp8_to_f32(c)) or
// bf16(quant::e2m1_to_f32(c) * 2^(s-127)) (NaN: a NaN); tests/gpu/operand_decode_test.cpp checks
// it on the host over every code pair and scale, and tests/gpu/mma_test.cpp the device build of the
// per-vendor paths over every e4m3fn pair. Host + device.
#include <cstdint>

#include "gpu/common/rounding.h"
#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/formats.h"
#include "quant/fp8.h"
#include "quant/hd.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu::common {

// --- e4m3fn, one code ------------------------------------------------------------------------------
// One e4m3fn code as bf16 or f16 bits, exactly: every e4m3fn value is a bf16 value and an f16 value
// (3 mantissa bits; exponents 2^-9 .. 2^8, all f16 normals). Bit arithmetic rather than
// fp8_to_f32's normalising loop; the static_assert below proves both equal to quant::fp8_to_f32 on
// all 256 codes at compile time. NaN: bf16 0x7FF0 | sign, as fp8_to_f32 gives it; f16 0x7F80 | sign.
MLACHECK_HD constexpr uint32_t e4m3fn_to_bf16_bits(uint32_t code) noexcept {
  const uint32_t sign = (code & 0x80u) << 8;
  const uint32_t mag = code & 0x7Fu;
  uint32_t bits;
  if (mag == 0x7Fu) {
    bits = 0x7FF0u;
  } else if (mag >= 0x08u) {  // normal: exponent field + 120 (bias 7 -> 127), mantissa on top
    bits = (mag << 4) + (120u << 7);
  } else {  // zero or subnormal m * 2^-9: exact in float32, a normal bf16
    bits = quant::f32_bits(static_cast<float>(mag) * 0x1p-9f) >> 16;
  }
  return sign | bits;
}
MLACHECK_HD constexpr uint32_t e4m3fn_to_f16_bits(uint32_t code) noexcept {
  const uint32_t sign = (code & 0x80u) << 8;
  const uint32_t mag = code & 0x7Fu;
  uint32_t bits;
  if (mag == 0x7Fu) {
    bits = 0x7F80u;
  } else if (mag >= 0x08u) {  // normal: exponent field + 8 (bias 7 -> 15), mantissa on top
    bits = (mag << 7) + (8u << 10);
  } else if (mag == 0u) {
    bits = 0u;
  } else {  // subnormal m * 2^-9, an f16 normal: float32 exponent - 112 (bias 127 -> 15)
    bits = (quant::f32_bits(static_cast<float>(mag) * 0x1p-9f) >> 13) - (112u << 10);
  }
  return sign | bits;
}

namespace detail {
constexpr bool e4m3fn_bits_match_fp8_to_f32() {
  for (uint32_t c = 0; c < 256; ++c) {
    const uint32_t f =
        quant::f32_bits(quant::fp8_to_f32(static_cast<uint8_t>(c), quant::Fp8Format::e4m3fn));
    if ((f & 0xFFFFu) != 0 || (f >> 16) != e4m3fn_to_bf16_bits(c)) return false;
    const uint32_t h = e4m3fn_to_f16_bits(c);
    const uint32_t sign = (h & 0x8000u) << 16, hmag = h & 0x7FFFu;
    const uint32_t as_f32 = hmag == 0x7F80u ? 0x7FF00000u                   // the NaN above
                            : hmag == 0u    ? 0u                            // zero
                                            : (hmag << 13) + (112u << 23);  // an f16 normal
    if ((sign | as_f32) != f) return false;
  }
  return true;
}
static_assert(e4m3fn_bits_match_fp8_to_f32(),
              "e4m3fn_to_bf16_bits / e4m3fn_to_f16_bits disagree with quant::fp8_to_f32");
}  // namespace detail

// --- e4m3fn, a pair --------------------------------------------------------------------------------
// Two e4m3fn codes (low byte first) as a bf16 pair (low half first). The 7 magnitude bits placed in
// float32's exponent and mantissa fields read 2^(e-127)·(1 + m/8) (or m/8·2^-126 for e = 0); times
// 2^120 that is the e4m3fn value 2^(e-7)·(1 + m/8) (or m·2^-9), exactly (no rounding, no flush:
// the kernels keep float32 subnormals): two shifts and two multiplies for both codes, on every
// vendor. A pair holding the NaN code (magnitude 0x7F) takes the bit arithmetic above.
MLACHECK_HD inline uint32_t e4m3fn_pair_to_bf16_pair(uint32_t codes) {
  if ((((codes & 0x7F7Fu) + 0x0101u) & 0x8080u) != 0)
    return e4m3fn_to_bf16_bits(codes & 0xFFu) | (e4m3fn_to_bf16_bits((codes >> 8) & 0xFFu) << 16);
  const float lo = quant::f32_from_bits((codes & 0x7Fu) << 20) * 0x1p120f;
  const float hi = quant::f32_from_bits((codes & 0x7F00u) << 12) * 0x1p120f;
  return (quant::f32_bits(lo) >> 16) | ((codes & 0x80u) << 8) | (quant::f32_bits(hi) & 0xFFFF0000u) |
         ((codes & 0x8000u) << 16);
}

// --- e4m3fn, four codes --------------------------------------------------------------------------
// Four e4m3fn codes (low byte first) as two bf16 pairs, `lo` codes 0 and 1, `hi` codes 2 and 3 (low
// half first): the values of e4m3fn_pair_to_bf16_pair, a NaN code as a NaN (its bits may differ).
// NVIDIA sm_89+: per pair one cvt.rn.f16x2.e4m3x2 (exact: every e4m3fn value is an f16 value; NaN
// stays NaN), the two halves widened to float32 and packed as bf16 (exact again: every f16 value of
// an e4m3fn code is a bf16 value): four instructions a pair with NaN handled on the way. (The
// decode it replaced in the Hopper a16w8 kernel — a byte permute, a shift, a mask and a bf16x2
// multiply by 2^120 a pair, ±480 for a NaN code — took four as well, plus a NaN probe of about 2.3
// a word and a fix-up path: a16w8 524 -> 404 µs at 256 x 8192 with this and the value tile's
// stmatrix stores, docs/PERF.md, device runs 1-2 of 2026-12-03's fifth session.)
// tests/gpu/mma_test.cpp checks every pair of codes. Elsewhere: e4m3fn_pair_to_bf16_pair.
MLACHECK_HD inline void e4m3fn_quad_to_bf16_pairs(uint32_t codes, uint32_t& lo, uint32_t& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const auto widen = [](uint32_t two) {
    uint32_t halves, pair;
    float a, b;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(halves) : "h"(static_cast<uint16_t>(two)));
    asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n"
        : "=f"(a), "=f"(b) : "r"(halves));
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(pair) : "f"(b), "f"(a));  // the first operand lands high
    return pair;
  };
  lo = widen(codes & 0xFFFFu);
  hi = widen(codes >> 16);
#else
  lo = e4m3fn_pair_to_bf16_pair(codes & 0xFFFFu);
  hi = e4m3fn_pair_to_bf16_pair(codes >> 16);
#endif
}

// The same two codes as an f16 pair. NVIDIA sm_89+: cvt.rn.f16x2.e4m3x2, one instruction for both
// (exact: every e4m3fn value is an f16 value; NaN stays NaN). Elsewhere (the host, AMD, whose fp8
// converts read e4m3fnuz on gfx942): the bit arithmetic.
MLACHECK_HD inline uint32_t e4m3fn_pair_to_f16_pair(uint32_t codes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t halves;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(halves) : "h"(static_cast<uint16_t>(codes)));
  return halves;
#else
  return e4m3fn_to_f16_bits(codes & 0xFFu) | (e4m3fn_to_f16_bits((codes >> 8) & 0xFFu) << 16);
#endif
}

// Two probabilities of the all-fp8 recipes' softmax step (P in [0, 448] or NaN: p = e^(s - m) <= 1)
// rounded to e4m3fn (round to nearest even, as quant::f32_to_fp8) and given as the f16 pair of
// those values, low half p0. NVIDIA sm_89+: cvt.rn.satfinite.e4m3x2.f32 and cvt.rn.f16x2.e4m3x2,
// two instructions a pair where the codec takes a few dozen a value (satfinite differs from the
// codec's overflow to NaN only above 448, outside the domain). tests/gpu/mma_test.cpp compares it
// with the codec on every float of the domain. Elsewhere: the codec.
// The two codes alone, p0's in the low byte (P of the Hopper family's e4m3 P·V): the first of those
// two instructions.
MLACHECK_HD inline uint16_t p_pair_to_e4m3fn_pair(float p0, float p1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint16_t codes;  // the first source operand lands in the high byte
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(codes) : "f"(p1), "f"(p0));
  return codes;
#else
  return static_cast<uint16_t>(quant::f32_to_fp8(p0, quant::Fp8Format::e4m3fn) |
                               (quant::f32_to_fp8(p1, quant::Fp8Format::e4m3fn) << 8));
#endif
}
MLACHECK_HD inline uint32_t p_pair_to_e4m3fn_f16_pair(float p0, float p1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return e4m3fn_pair_to_f16_pair(p_pair_to_e4m3fn_pair(p0, p1));
#else
  return e4m3fn_to_f16_bits(quant::f32_to_fp8(p0, quant::Fp8Format::e4m3fn)) |
         (e4m3fn_to_f16_bits(quant::f32_to_fp8(p1, quant::Fp8Format::e4m3fn)) << 16);
#endif
}

// Two codes of either fp8 variant as a bf16 pair: e4m3fn by the fast path, e4m3fnuz (bias 8, NaN =
// 0x80; the portable family runs both) by the codec.
MLACHECK_HD inline uint32_t fp8_pair_to_bf16_pair(uint8_t first, uint8_t second, quant::Fp8Format f) {
  if (f == quant::Fp8Format::e4m3fn)
    return e4m3fn_pair_to_bf16_pair(static_cast<uint32_t>(first) | (static_cast<uint32_t>(second) << 8));
  return static_cast<uint32_t>(quant::f32_to_bf16(quant::fp8_to_f32(first, f))) |
         (static_cast<uint32_t>(quant::f32_to_bf16(quant::fp8_to_f32(second, f))) << 16);
}

// --- MXFP4 -----------------------------------------------------------------------------------------
// E2M1 magnitude m (0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6) as float32: for m >= 2 the bf16 pattern is
// (m << 6) + 0x3F00 (exponent 127 + (m >> 1) - 1, mantissa bit m & 1), 0.5 and 0 apart.
MLACHECK_HD inline float e2m1_magnitude(uint32_t m) {
  const uint32_t bits = m >= 2 ? (m << 6) + 0x3F00u : m == 1 ? 0x3F00u : 0u;
  return quant::f32_from_bits(bits << 16);
}

// Two MXFP4 elements (one code byte, low nibble first) with their block scale, as a bf16 pair:
// e2m1 · 2^(s-127) in float32 (the reference's product, exact: 2 significant bits, and the product
// of a normal scale and a value < 8 stays below float32's max for s <= 253), then its top 16 bits
// (exact: 2 significant bits). Scales 0 (2^-127, a subnormal), 254 and 255 (NaN) take the codec.
MLACHECK_HD inline uint32_t mxfp4_pair_to_bf16_pair(uint32_t codes, uint32_t scale) {
  if (scale == 0 || scale >= 254) {
    const float s = quant::e8m0_to_f32(static_cast<uint8_t>(scale));
    const float lo = quant::detail::mul_amd_nan(quant::e2m1_to_f32(codes & 0x0F), s);
    const float hi = quant::detail::mul_amd_nan(quant::e2m1_to_f32((codes >> 4) & 0x0F), s);
    return (quant::f32_bits(lo) >> 16) | (quant::f32_bits(hi) & 0xFFFF0000u);
  }
  const float s = quant::f32_from_bits(scale << 23);
  const float lo = e2m1_magnitude(codes & 7) * s;
  const float hi = e2m1_magnitude((codes >> 4) & 7) * s;
  return (quant::f32_bits(lo) >> 16) | ((codes & 0x08u) << 12) | (quant::f32_bits(hi) & 0xFFFF0000u) |
         ((codes & 0x80u) << 24);
}


// --- MXFP4, eight codes by table lookups -------------------------------------------------------------
// For kernels that decode whole tiles (the Hopper family's a16w4): four code bytes (eight E2M1
// codes, byte k = codes 2k and 2k + 1, low nibble first) with one block scale as four bf16 pairs,
// out[k] = byte k's two values, the bits of mxfp4_pair_to_bf16_pair(byte k, scale), by byte-permute
// table lookups and one bf16x2 multiply per pair, for every scale (NaN by NaN-ness).
//   1. Each magnitude m (3 bits; the selector's bit 3 would replicate a sign) picks a byte of
//      kMxfp4Selectors: low nibble the index of the value's low bf16 byte in kMxfp4Bytes, high
//      nibble the index of its high byte. A negative code sets bit 2 of the high nibble (the
//      second half of kMxfp4Bytes holds the high bytes with the sign set): a permute of a word of
//      0x80 bytes by the raw codes gives 0xFF where the code's sign (its selector bit 3)
//      replicates the 0x80's top bit, 0x80 elsewhere, and its bit 6 is the flag.
//   2. Two such bytes are the four selector nibbles of a pair: a permute of kMxfp4Bytes by them
//      gives [low byte, high byte] of both values, the exact bf16 of ±0, 0.5, 1, 1.5, 2, 3, 4, 6.
//   3. Times 2^(s-127) (mxfp4_scale_bf16: bits s << 7 for s in 1..254; for s = 0 the bf16
//      subnormal 0x0040, 2^-127; for s = 255 a NaN, which makes every value NaN as the reference's
//      NaN scale does): exact, the values having two significant bits, except where the float32
//      product of the reference overflows too (s >= 253, to ±Inf in both: bf16 has float32's
//      exponent range and both round to nearest); the subnormal results (0.5 · 2^-126 at s = 1,
//      and at s = 0 every value below 2^-126) are exact as well: bf16 arithmetic keeps subnormal
//      operands and results (PTX mul.bf16x2 has no flush-to-zero form; tests/gpu/mma_test.cpp
//      checks every code byte at every scale on the device). Scales 0 and 255 once took the pair
//      decode in a branch of their own, which made the Hopper a16w4 tile loop's code too large for
//      the instruction cache (device run 2 of 2026-12-02's sixth session).
// About 2.4 instructions a code on NVIDIA sm_90 (per word: an AND, 3 shifts, 8 permutes, 2 ORs, 4
// multiplies) and lookups instead of per-element arithmetic. Elsewhere the same lookups by a
// portable model of the permute (so the host test checks the tables): mxfp4_octet_model.
// tests/gpu/operand_decode_test.cpp checks it against mxfp4_pair_to_bf16_pair over every code byte
// and scale on the host, tests/gpu/mma_test.cpp the device build.
inline constexpr uint32_t kMxfp4SelectorsLow = 0x13141000u;   // m = 0..3
inline constexpr uint32_t kMxfp4SelectorsHigh = 0x23242220u;  // m = 4..7
inline constexpr uint32_t kMxfp4BytesLow = 0xC0403F00u;       // 00 3F 40 C0
inline constexpr uint32_t kMxfp4BytesHigh = 0x40C0BF80u;      // 80 BF C0 40
// 2^(s-127) as bf16 bits for an E8M0 scale s (step 3 above).
MLACHECK_HD constexpr uint32_t mxfp4_scale_bf16(uint32_t scale) noexcept {
  constexpr uint32_t kTwoToMinus127 = 0x0040u;  // exponent field 0, mantissa 0x40: 2^-1 * 2^-126
  constexpr uint32_t kNan = 0x7FC0u;
  return scale == 0 ? kTwoToMinus127 : scale == 255 ? kNan : scale << 7;
}

namespace detail {
// PTX prmt.b32 d, a, b, c (default mode): byte i of d is byte c[4i+2:4i] of {b, a} (a the low
// word), or that byte's top bit replicated when c[4i+3] is set.
MLACHECK_HD constexpr uint32_t prmt_model(uint32_t a, uint32_t b, uint32_t c) noexcept {
  const uint64_t both = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t d = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t nib = (c >> (4 * i)) & 0xFu;
    const auto byte = static_cast<uint32_t>((both >> (8 * (nib & 7u))) & 0xFFu);
    d |= ((nib & 8u) != 0 ? ((byte & 0x80u) != 0 ? 0xFFu : 0u) : byte) << (8 * i);
  }
  return d;
}
// The selector words of step 1 for the four codes in the low 16 bits of `codes`.
MLACHECK_HD constexpr uint32_t mxfp4_selectors_model(uint32_t codes) noexcept {
  return prmt_model(kMxfp4SelectorsLow, kMxfp4SelectorsHigh, codes & 0x7777u) |
         (prmt_model(0x80808080u, 0x80808080u, codes) & 0x40404040u);
}
}  // namespace detail

// The portable lookups: byte k of `codes` through steps 1 and 2 (the scale not applied): the bf16
// pair of mxfp4_pair_to_bf16_pair(byte k, 127).
MLACHECK_HD constexpr uint32_t mxfp4_unscaled_pair_model(uint32_t codes, int k) noexcept {
  const uint32_t sel = detail::mxfp4_selectors_model(codes >> (16 * (k / 2)));
  return detail::prmt_model(kMxfp4BytesLow, kMxfp4BytesHigh, sel >> (16 * (k % 2)));
}

MLACHECK_HD inline void mxfp4_octet_to_bf16_pairs(uint32_t codes, uint32_t scale, uint32_t (&out)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t scale_pair = mxfp4_scale_bf16(scale) * 0x00010001u;  // in both halves
  const uint32_t mag = codes & 0x77777777u;
  uint32_t sel[2], sign[2];
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(sel[0]) : "r"(kMxfp4SelectorsLow), "r"(kMxfp4SelectorsHigh), "r"(mag));
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(sel[1]) : "r"(kMxfp4SelectorsLow), "r"(kMxfp4SelectorsHigh), "r"(mag >> 16));
  asm("prmt.b32 %0, %1, %1, %2;\n" : "=r"(sign[0]) : "r"(0x80808080u), "r"(codes));
  asm("prmt.b32 %0, %1, %1, %2;\n" : "=r"(sign[1]) : "r"(0x80808080u), "r"(codes >> 16));
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t both = sel[h] | (sign[h] & 0x40404040u);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      uint32_t pair;
      asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(pair) : "r"(kMxfp4BytesLow), "r"(kMxfp4BytesHigh), "r"(both >> (16 * k)));
      asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(out[2 * h + k]) : "r"(pair), "r"(scale_pair));
    }
  }
#else
  const float s = quant::f32_from_bits(mxfp4_scale_bf16(scale) << 16);
  for (int k = 0; k < 4; ++k) {
    const uint32_t pair = mxfp4_unscaled_pair_model(codes, k);
    const float lo = quant::f32_from_bits(pair << 16) * s;
    const float hi = quant::f32_from_bits(pair & 0xFFFF0000u) * s;
    out[k] = (quant::f32_bits(lo) >> 16) | (quant::f32_bits(hi) & 0xFFFF0000u);
  }
#endif
}

// --- f16 operands of an f16 P·V (a4w4) -----------------------------------------------------------
// Two floats rounded to f16 (f16_bits: RNE, subnormals kept, ±Inf past 65504, NaN a NaN) as an f16
// pair, low half `lo`: the a4w4 recipe's P. NVIDIA: one cvt.rn.f16x2.f32 (tests/gpu/mma_test.cpp
// compares it with f16_bits on every float32 in either half). Elsewhere: f16_bits.
MLACHECK_HD inline uint32_t f32_pair_to_f16_pair(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  uint32_t halves;  // the first source operand lands high
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(halves) : "f"(hi), "f"(lo));
  return halves;
#else
  return uint32_t{f16_bits(lo)} | uint32_t{f16_bits(hi)} << 16;
#endif
}

// A bf16 pair as the f16 pair of its values rounded to f16, low half first: V in the a4w4
// emulation's P·V operand type (ref/emulated_inputs.h v_row). Exact where the value is an f16
// value, as every E2M1 value times 2^(s-127) is for scales 104..140. The pair widened to two floats
// (a shift, a mask), then f32_pair_to_f16_pair (tests/gpu/mma_test.cpp compares it with f16_bits on
// every bf16 value in either half).
MLACHECK_HD inline uint32_t bf16_pair_to_f16_pair(uint32_t pair) {
  return f32_pair_to_f16_pair(quant::f32_from_bits(pair << 16), quant::f32_from_bits(pair & 0xFFFF0000u));
}

}  // namespace mlacheck::gpu::common
