#pragma once
// The table of device codec checks: which codec, under which options, on which inputs, and the
// host twin that computes the expected outputs with the host-compiled codecs. Plain C++, compiled
// in every build (so the host side is compile-checked everywhere); gpu/codec_check.h runs the same
// cases on a device.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/codec_ops.h"

namespace mlacheck::gpu {

// The input patterns of a case.
enum class CodecInputs : uint8_t {
  codes4,           // 0 .. 15: every E2M1 code
  codes8,           // 0 .. 255: every FP8 / E8M0 code
  bf16_patterns,    // 0 .. 0xFFFF: every bf16 bit pattern
  bf16_values,      // b << 16 for every bf16 pattern b: every bf16 value as float32 bits
  f32_rounding,     // float32 patterns for f32 -> bf16 and -> e8m0: every top half with the low
                    // halves that decide rounding (0, 1, ties, just around them, all ones), corner
                    // values (±0, ±Inf, NaNs, subnormals, overflow ties) and a fixed random sample
  amax_sweep,       // float32 amax patterns: every exponent with the mantissas at the rounding
                    // edges of mxfp4_block_exponent, both signs, and a stride over all 2^32
  exponents,        // -127 .. 127 as int32 bits: every MXFP4 block exponent
};

// How a 32-bit pattern is read, for messages.
enum class BitsKind : uint8_t { f32, bf16, fp8, e2m1, e8m0, int32 };

struct CodecCase {
  std::string name;  // e.g. "fp8_encode/e4m3fnuz/saturate"
  CodecOp op;
  CodecInputs inputs;
  BitsKind input_kind;
  BitsKind output_kind;
};

// Every case, in a fixed order. Cheap: inputs are made by codec_inputs().
std::vector<CodecCase> codec_cases();

// The input patterns of a case; the same on every call and every machine.
std::vector<uint32_t> codec_inputs(CodecInputs which);

// The host twin: apply_codec over the inputs, compiled by the host compiler.
std::vector<uint32_t> host_outputs(const CodecOp& op, const std::vector<uint32_t>& inputs);

// "0x3F800000 (s=0 e=0x7F m=0x000000)" and the like: hex, split into the format's fields.
std::string describe_bits(BitsKind kind, uint32_t bits);

}  // namespace mlacheck::gpu
