#pragma once
// Each scalar codec of quant/ as one operation from a 32-bit pattern to a 32-bit pattern. The host
// twin and every device run a case through this same dispatch, so the only thing that differs
// between them is the compiler and the processor executing the codecs -- which is what the device
// codec check compares, bit for bit.
#include <cstdint>

#include "quant/bf16.h"
#include "quant/bits.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/formats.h"
#include "quant/fp8.h"
#include "quant/hd.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu {

enum class CodecKind : uint8_t {
  fp8_decode,            // code -> f32 bits of fp8_to_f32(code, fp8)
  fp8_encode,            // f32 bits -> f32_to_fp8(x, fp8, overflow)
  e2m1_decode,           // code (0..15) -> f32 bits of e2m1_to_f32
  e2m1_encode,           // f32 bits -> f32_to_e2m1(x, rounding)
  e2m1_encode_scaled,    // f32 bits of x -> f32_to_e2m1(mul_amd_nan(x, 2^scale_log2), rounding)
  e8m0_encode,           // f32 bits -> f32_to_e8m0(x) (torch's cast)
  e8m0_decode,           // byte -> f32 bits of e8m0_to_f32
  e8m0_from_exponent,    // int32 e (two's complement) -> e8m0_from_exponent(e)
  mxfp4_block_exponent,  // f32 bits of amax -> int32 e (two's complement)
  bf16_roundtrip,        // bf16 bits -> f32_to_bf16(bf16_to_f32(b))
  f32_to_bf16,           // f32 bits -> bf16 bits
};

struct CodecOp {
  CodecKind kind = CodecKind::fp8_decode;
  quant::Fp8Format fp8 = quant::Fp8Format::e4m3fn;
  quant::Overflow overflow = quant::Overflow::nan;
  quant::E2M1Rounding rounding = quant::E2M1Rounding::rne;
  // e2m1_encode_scaled: the element is scaled by 2^scale_log2 first with the MXFP4 quantizer's own
  // product (quant/mxfp4_bulk.cpp: qx = mul_amd_nan(x, 2^-e)), so the device's float32 multiply
  // -- subnormal results included -- is tested too. In [-126, 127], where 2^scale_log2 is normal.
  int scale_log2 = 0;
};

MLACHECK_HD constexpr float pow2_f32(int e) noexcept {
  return quant::f32_from_bits(static_cast<uint32_t>(e + 127) << 23);
}

MLACHECK_HD constexpr uint32_t apply_codec(const CodecOp& op, uint32_t x) noexcept {
  switch (op.kind) {
    case CodecKind::fp8_decode:
      return quant::f32_bits(quant::fp8_to_f32(static_cast<uint8_t>(x), op.fp8));
    case CodecKind::fp8_encode:
      return quant::f32_to_fp8(quant::f32_from_bits(x), op.fp8, op.overflow);
    case CodecKind::e2m1_decode:
      return quant::f32_bits(quant::e2m1_to_f32(static_cast<uint8_t>(x)));
    case CodecKind::e2m1_encode:
      return quant::f32_to_e2m1(quant::f32_from_bits(x), op.rounding);
    case CodecKind::e2m1_encode_scaled:
      return quant::f32_to_e2m1(
          quant::detail::mul_amd_nan(quant::f32_from_bits(x), pow2_f32(op.scale_log2)),
          op.rounding);
    case CodecKind::e8m0_encode:
      return quant::f32_to_e8m0(quant::f32_from_bits(x));
    case CodecKind::e8m0_decode:
      return quant::f32_bits(quant::e8m0_to_f32(static_cast<uint8_t>(x)));
    case CodecKind::e8m0_from_exponent:
      return quant::e8m0_from_exponent(static_cast<int32_t>(x));
    case CodecKind::mxfp4_block_exponent:
      return static_cast<uint32_t>(quant::mxfp4_block_exponent(quant::f32_from_bits(x)));
    case CodecKind::bf16_roundtrip:
      return quant::f32_to_bf16(quant::bf16_to_f32(static_cast<uint16_t>(x)));
    case CodecKind::f32_to_bf16:
      return quant::f32_to_bf16(quant::f32_from_bits(x));
  }
  return 0xDEADBEEFu;  // unreachable for valid kinds; a value no case produces
}

}  // namespace mlacheck::gpu
