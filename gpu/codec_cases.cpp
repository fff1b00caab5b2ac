#include "gpu/codec_cases.h"

#include <cstdio>
#include <iterator>
#include <utility>

namespace mlacheck::gpu {

namespace {

using quant::E2M1Rounding;
using quant::Fp8Format;
using quant::Overflow;

const char* name_of(Fp8Format f) { return f == Fp8Format::e4m3fn ? "e4m3fn" : "e4m3fnuz"; }
const char* name_of(Overflow o) { return o == Overflow::nan ? "nan" : "saturate"; }
const char* name_of(E2M1Rounding r) { return r == E2M1Rounding::rne ? "rne" : "ties_away"; }

void append_range(std::vector<uint32_t>& out, uint32_t first, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) out.push_back(first + i);
}

std::vector<uint32_t> f32_rounding_patterns() {
  std::vector<uint32_t> out;
  // Every bf16 (top half) with the low halves that decide RNE: exact, just above exact, just below
  // the tie, the tie, just above the tie, all ones.
  constexpr uint32_t kLows[] = {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu};
  for (uint32_t hi = 0; hi <= 0xFFFFu; ++hi)
    for (const uint32_t lo : kLows) out.push_back((hi << 16) | lo);
  // Corners named in NUMERICS §2.1 (some repeat the grid above; listed for the reader).
  constexpr uint32_t kCorners[] = {
      0x00000000u, 0x80000000u,  // ±0
      0x7F800000u, 0xFF800000u,  // ±Inf
      0x7FC00000u, 0xFFC00000u,  // quiet NaNs
      0x7F800001u, 0xFF800001u,  // signalling NaNs, smallest payload
      0x7FBFFFFFu, 0x7FFFFFFFu, 0xFFFFFFFFu,  // NaN payloads that would round up as numbers
      0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00400000u,  // subnormals
      0x00008000u, 0x00018000u,  // subnormal ties: to 0x0000, to 0x0002
      0x3F808000u, 0x3F818000u,  // ties at 1.0: to even below, to even above
      0x7F7F7FFFu, 0x7F7F8000u, 0x7F7FFFFFu,  // max finite, tie that overflows to Inf, above it
  };
  out.insert(out.end(), std::begin(kCorners), std::end(kCorners));
  // A fixed pseudo-random sample (xorshift32), for patterns the grid above does not hold.
  uint32_t state = 0x9E3779B9u;
  for (int i = 0; i < (1 << 18); ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    out.push_back(state);
  }
  return out;
}

std::vector<uint32_t> amax_sweep() {
  std::vector<uint32_t> out;
  // r = (bits + 0x200000) & 0xFF800000 carries into the exponent from mantissa 0x600000 on.
  constexpr uint32_t kMantissas[] = {0x000000u, 0x000001u, 0x1FFFFFu, 0x200000u, 0x200001u,
                                     0x5FFFFFu, 0x600000u, 0x600001u, 0x7FFFFFu};
  for (const uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exponent = 0; exponent <= 0xFFu; ++exponent)
      for (const uint32_t mantissa : kMantissas) out.push_back(sign | (exponent << 23) | mantissa);
  constexpr uint64_t kStride = 4099;  // prime: the sweep meets every residue of every field
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += kStride) out.push_back(static_cast<uint32_t>(u));
  return out;
}

}  // namespace

std::vector<CodecCase> codec_cases() {
  std::vector<CodecCase> cases;
  const auto add = [&](std::string name, CodecOp op, CodecInputs inputs, BitsKind in,
                       BitsKind out) {
    cases.push_back({std::move(name), op, inputs, in, out});
  };
  for (const Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz})
    add(std::string("fp8_decode/") + name_of(f), {CodecKind::fp8_decode, f}, CodecInputs::codes8,
        BitsKind::fp8, BitsKind::f32);
  add("e2m1_decode", {CodecKind::e2m1_decode}, CodecInputs::codes4, BitsKind::e2m1, BitsKind::f32);
  add("e8m0_decode", {CodecKind::e8m0_decode}, CodecInputs::codes8, BitsKind::e8m0, BitsKind::f32);
  for (const Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz})
    for (const Overflow o : {Overflow::nan, Overflow::saturate})
      add(std::string("fp8_encode/") + name_of(f) + "/" + name_of(o),
          {CodecKind::fp8_encode, f, o}, CodecInputs::bf16_values, BitsKind::f32, BitsKind::fp8);
  for (const E2M1Rounding r : {E2M1Rounding::rne, E2M1Rounding::ties_away}) {
    CodecOp op{CodecKind::e2m1_encode};
    op.rounding = r;
    add(std::string("e2m1_encode/") + name_of(r), op, CodecInputs::bf16_values, BitsKind::f32,
        BitsKind::e2m1);
    // Scales: the smallest normal power of two (normal inputs become subnormal), small ones
    // either side of 1, and the largest (an amax near 2^-127 scaled up).
    op.kind = CodecKind::e2m1_encode_scaled;
    for (const int scale_log2 : {-126, -2, 3, 127}) {
      op.scale_log2 = scale_log2;
      add(std::string("e2m1_encode_scaled/") + name_of(r) + "/x2^" + std::to_string(scale_log2),
          op, CodecInputs::bf16_values, BitsKind::f32, BitsKind::e2m1);
    }
  }
  add("bf16_roundtrip", {CodecKind::bf16_roundtrip}, CodecInputs::bf16_patterns, BitsKind::bf16,
      BitsKind::bf16);
  add("f32_to_bf16", {CodecKind::f32_to_bf16}, CodecInputs::f32_rounding, BitsKind::f32,
      BitsKind::bf16);
  add("mxfp4_block_exponent", {CodecKind::mxfp4_block_exponent}, CodecInputs::amax_sweep,
      BitsKind::f32, BitsKind::int32);
  add("e8m0_encode", {CodecKind::e8m0_encode}, CodecInputs::f32_rounding, BitsKind::f32,
      BitsKind::e8m0);
  add("e8m0_from_exponent", {CodecKind::e8m0_from_exponent}, CodecInputs::exponents,
      BitsKind::int32, BitsKind::e8m0);
  return cases;
}

std::vector<uint32_t> codec_inputs(CodecInputs which) {
  std::vector<uint32_t> out;
  switch (which) {
    case CodecInputs::codes4:
      append_range(out, 0, 16);
      break;
    case CodecInputs::codes8:
      append_range(out, 0, 256);
      break;
    case CodecInputs::bf16_patterns:
      append_range(out, 0, 0x10000);
      break;
    case CodecInputs::bf16_values:
      for (uint32_t b = 0; b <= 0xFFFFu; ++b) out.push_back(b << 16);
      break;
    case CodecInputs::f32_rounding:
      out = f32_rounding_patterns();
      break;
    case CodecInputs::amax_sweep:
      out = amax_sweep();
      break;
    case CodecInputs::exponents:
      for (int32_t e = -127; e <= 127; ++e) out.push_back(static_cast<uint32_t>(e));
      break;
  }
  return out;
}

std::vector<uint32_t> host_outputs(const CodecOp& op, const std::vector<uint32_t>& inputs) {
  std::vector<uint32_t> out;
  out.reserve(inputs.size());
  for (const uint32_t x : inputs) out.push_back(apply_codec(op, x));
  return out;
}

std::string describe_bits(BitsKind kind, uint32_t bits) {
  char text[64] = "?";
  switch (kind) {
    case BitsKind::f32:
      std::snprintf(text, sizeof text, "0x%08X (s=%u e=0x%02X m=0x%06X)", bits, bits >> 31,
                    (bits >> 23) & 0xFFu, bits & 0x7FFFFFu);
      break;
    case BitsKind::bf16:
      std::snprintf(text, sizeof text, "0x%04X (s=%u e=0x%02X m=0x%02X)", bits, (bits >> 15) & 1u,
                    (bits >> 7) & 0xFFu, bits & 0x7Fu);
      break;
    case BitsKind::fp8:
      std::snprintf(text, sizeof text, "0x%02X (s=%u e=0x%X m=0x%X)", bits, (bits >> 7) & 1u,
                    (bits >> 3) & 0xFu, bits & 0x7u);
      break;
    case BitsKind::e2m1:
      std::snprintf(text, sizeof text, "0x%X (s=%u e=%u m=%u)", bits, (bits >> 3) & 1u,
                    (bits >> 1) & 0x3u, bits & 0x1u);
      break;
    case BitsKind::e8m0:
      std::snprintf(text, sizeof text, "0x%02X", bits);
      break;
    case BitsKind::int32:
      std::snprintf(text, sizeof text, "%d (0x%08X)", static_cast<int>(bits), bits);
      break;
  }
  return text;
}

}  // namespace mlacheck::gpu
