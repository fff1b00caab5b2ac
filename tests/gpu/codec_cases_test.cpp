// The device codec table on the host side (every build): the cases cover what they claim, and the
// dispatch reaches the right codec. The codecs' own correctness is quant/'s tests' job; these
// anchors only catch wiring mistakes, which the host/device comparison could not see because both
// sides share the dispatch.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpu/codec_cases.h"

namespace mlacheck::gpu {
namespace {

using quant::E2M1Rounding;
using quant::Fp8Format;
using quant::Overflow;

// The dispatch stays usable at compile time (and so in device code with no host-only calls).
static_assert(apply_codec({CodecKind::fp8_decode, Fp8Format::e4m3fn}, 0x7E) == 0x43E00000u);

uint32_t host_one(const CodecOp& op, uint32_t x) { return host_outputs(op, {x}).at(0); }

TEST(GpuCodecCases, NamesAreUniqueAndInputsCoverWhatTheyClaim) {
  std::set<std::string> names;
  for (const CodecCase& c : codec_cases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    const std::size_t n = codec_inputs(c.inputs).size();
    switch (c.inputs) {
      case CodecInputs::codes4: EXPECT_EQ(n, 16u) << c.name; break;
      case CodecInputs::codes8: EXPECT_EQ(n, 256u) << c.name; break;
      case CodecInputs::bf16_patterns:
      case CodecInputs::bf16_values: EXPECT_EQ(n, 65536u) << c.name; break;
      case CodecInputs::exponents: EXPECT_EQ(n, 255u) << c.name; break;
      case CodecInputs::f32_rounding: EXPECT_GT(n, 6u * 65536u) << c.name; break;
      case CodecInputs::amax_sweep: EXPECT_GT(n, 1000000u) << c.name; break;
    }
    if (c.op.kind == CodecKind::e2m1_encode_scaled) {
      EXPECT_GE(c.op.scale_log2, -126) << c.name;
      EXPECT_LE(c.op.scale_log2, 127) << c.name;
    }
  }
  // Every FP8 variant x overflow policy, every E2M1 rounding.
  for (const char* name :
       {"fp8_decode/e4m3fn", "fp8_decode/e4m3fnuz", "e2m1_decode", "e8m0_decode",
        "fp8_encode/e4m3fn/nan", "fp8_encode/e4m3fn/saturate", "fp8_encode/e4m3fnuz/nan",
        "fp8_encode/e4m3fnuz/saturate", "e2m1_encode/rne", "e2m1_encode/ties_away",
        "e2m1_encode_scaled/rne/x2^-126", "e2m1_encode_scaled/ties_away/x2^127", "bf16_roundtrip",
        "f32_to_bf16", "mxfp4_block_exponent", "e8m0_encode", "e8m0_from_exponent"})
    EXPECT_EQ(names.count(name), 1u) << name;
}

TEST(GpuCodecCases, InputsAreTheSameOnEveryCall) {
  EXPECT_EQ(codec_inputs(CodecInputs::f32_rounding), codec_inputs(CodecInputs::f32_rounding));
  EXPECT_EQ(codec_inputs(CodecInputs::amax_sweep), codec_inputs(CodecInputs::amax_sweep));
}

TEST(GpuCodecCases, DispatchReachesTheNamedCodec) {
  // Largest finite values: e4m3fn 0x7E = 448, e4m3fnuz 0x7F = 240.
  EXPECT_EQ(host_one({CodecKind::fp8_decode, Fp8Format::e4m3fn}, 0x7E), 0x43E00000u);
  EXPECT_EQ(host_one({CodecKind::fp8_decode, Fp8Format::e4m3fnuz}, 0x7F), 0x43700000u);
  // 1000 rounds past both maxima: NaN codes, or the max under saturate.
  const uint32_t k1000 = 0x447A0000u;
  EXPECT_EQ(host_one({CodecKind::fp8_encode, Fp8Format::e4m3fn, Overflow::nan}, k1000), 0x7Fu);
  EXPECT_EQ(host_one({CodecKind::fp8_encode, Fp8Format::e4m3fn, Overflow::saturate}, k1000), 0x7Eu);
  EXPECT_EQ(host_one({CodecKind::fp8_encode, Fp8Format::e4m3fnuz, Overflow::nan}, k1000), 0x80u);
  EXPECT_EQ(host_one({CodecKind::fp8_encode, Fp8Format::e4m3fnuz, Overflow::saturate}, k1000),
            0x7Fu);
  EXPECT_EQ(host_one({CodecKind::e2m1_decode}, 0x7), 0x40C00000u);  // 6.0
  EXPECT_EQ(host_one({CodecKind::e8m0_decode}, 0x7F), 0x3F800000u);  // 1.0
  // 2.5 is a tie between E2M1 2 (code 4) and 3 (code 5): even -> 4, away -> 5. Scaled by 2^1 from
  // 1.25 to show the scale is applied.
  CodecOp e2m1{CodecKind::e2m1_encode_scaled};
  e2m1.scale_log2 = 1;
  e2m1.rounding = E2M1Rounding::rne;
  EXPECT_EQ(host_one(e2m1, 0x3FA00000u), 0x4u);
  e2m1.rounding = E2M1Rounding::ties_away;
  EXPECT_EQ(host_one(e2m1, 0x3FA00000u), 0x5u);
  // Unscaled, 1.25 is the tie between 1 (code 2) and 1.5 (code 3).
  e2m1.kind = CodecKind::e2m1_encode;
  e2m1.rounding = E2M1Rounding::rne;
  EXPECT_EQ(host_one(e2m1, 0x3FA00000u), 0x2u);
  e2m1.rounding = E2M1Rounding::ties_away;
  EXPECT_EQ(host_one(e2m1, 0x3FA00000u), 0x3u);
  EXPECT_EQ(host_one({CodecKind::mxfp4_block_exponent}, 0x40C00000u), 0u);  // amax 6 -> e = 0
  EXPECT_EQ(host_one({CodecKind::e8m0_encode}, 0x3FC00000u), 0x80u);  // 1.5 rounds up to 2
  EXPECT_EQ(host_one({CodecKind::e8m0_from_exponent}, static_cast<uint32_t>(-127)), 0x00u);
  EXPECT_EQ(host_one({CodecKind::bf16_roundtrip}, 0x3F80u), 0x3F80u);
  EXPECT_EQ(host_one({CodecKind::f32_to_bf16}, 0x3F808000u), 0x3F80u);  // tie to even
}

TEST(GpuCodecCases, DescribeBitsSplitsFields) {
  EXPECT_EQ(describe_bits(BitsKind::f32, 0xBF800001u), "0xBF800001 (s=1 e=0x7F m=0x000001)");
  EXPECT_EQ(describe_bits(BitsKind::bf16, 0x7FC0u), "0x7FC0 (s=0 e=0xFF m=0x40)");
  EXPECT_EQ(describe_bits(BitsKind::fp8, 0xFEu), "0xFE (s=1 e=0xF m=0x6)");
  EXPECT_EQ(describe_bits(BitsKind::e2m1, 0xFu), "0xF (s=1 e=3 m=1)");
  EXPECT_EQ(describe_bits(BitsKind::e8m0, 0x7Fu), "0x7F");
  EXPECT_EQ(describe_bits(BitsKind::int32, 0xFFFFFF81u), "-127 (0xFFFFFF81)");
}

}  // namespace
}  // namespace mlacheck::gpu
