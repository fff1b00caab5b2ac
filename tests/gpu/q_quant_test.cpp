// The portable strategies' Q quantization on the device against quant/bulk.h (what the reference
// quantizes Q with), bit for bit: every code, every block scale, the per-tensor scale. Data: the
// harness's randn * 0.02 in bf16, plus values that reach the edges (zeros, the fp8 max and past
// it, subnormals, MXFP4 exponent round-ups), in tensors of several rows so the amax reduction
// crosses blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gpu/availability.h"
#include "problem/recipe.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/q_quant_check.h"
#endif

namespace mlacheck::gpu {
namespace {

using problem::QFormat;

// Marsaglia's xorshift32: the next state of s.
uint32_t xorshift32(uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

// [tokens, 16, 576] bf16: xorshift normals-ish (sum of uniforms) * scale, with edge values planted.
std::vector<uint16_t> make_q(int tokens, float scale, uint32_t seed, bool edges) {
  std::vector<uint16_t> q(static_cast<std::size_t>(tokens) * problem::kNumHeads * problem::kQkDim);
  uint32_t s = seed;
  const auto next = [&] { return static_cast<float>(xorshift32(s)) / 4294967296.0f; };
  for (uint16_t& x : q) {
    const float z = (next() + next() + next() + next() - 2.0f) * 1.7f;
    x = quant::f32_to_bf16(z * scale);
  }
  if (edges) {
    const float planted[] = {0.0f, -0.0f, 448.0f, -464.0f, 1000.0f, 240.0f, 1e-30f, -3e-39f,
                             6.0f, 1.75f * 64, 0.25f, -0.3125f, 7.0f, 65504.0f};
    for (std::size_t i = 0; i < std::size(planted); ++i)
      q[(i * 7919) % q.size()] = quant::f32_to_bf16(planted[i]);
    for (std::size_t i = 1000; i < 1032; ++i) q[i] = 0;  // an all-zero MXFP4 block
  }
  return q;
}

// [tokens, 16, 576] bf16 of both signs whose magnitudes are spread evenly over 2^-40 .. 2^10 with
// random significands: after the per-tensor scale, the fp8 codes of every binade, the subnormal ones,
// ties (a bf16 significand's low 4 bits 1000) and the values that round to zero.
std::vector<uint16_t> make_q_log_uniform(int tokens, uint32_t seed) {
  std::vector<uint16_t> q(static_cast<std::size_t>(tokens) * problem::kNumHeads * problem::kQkDim);
  constexpr int kLowest = -40, kHighest = 10;  // the binades 2^kLowest .. 2^kHighest
  constexpr uint32_t kBias = 127, kSign = 0x8000, kMantissa = 0x7F, kMantissaBits = 7;  // bf16
  uint32_t s = seed;
  for (uint16_t& x : q) {
    const uint32_t r = xorshift32(s);
    const uint32_t exponent = kBias + kLowest + (r >> 8) % (kHighest - kLowest + 1);
    x = static_cast<uint16_t>((r & kSign) | exponent << kMantissaBits | (r & kMantissa));
  }
  return q;
}

struct QCase {
  std::string name;
  problem::Recipe recipe;
  std::vector<uint16_t> q;
  std::size_t q_offset = 0;  // elements: odd misaligns Q for the fp8 kernels' vector loads
};

std::vector<QCase> make_q_cases() {
  std::vector<QCase> out;
  const auto with = [](const char* name, auto edit) {
    problem::Recipe r = *problem::find_recipe(name);
    edit(r);
    return r;
  };
  const auto none = [](problem::Recipe&) {};
  for (const bool edges : {false, true}) {
    const std::string tag = edges ? "_edges" : "_harness";
    const std::vector<uint16_t> q = make_q(37, 0.02f, edges ? 7u : 3u, edges);
    out.push_back({"a8w8" + tag, with("a8w8", none), q});
    out.push_back({"a8w8_fnuz" + tag,
                   with("a8w8", [](problem::Recipe& r) { r.fp8 = quant::Fp8Format::e4m3fnuz; }),
                   q});
    out.push_back({"fp8_dynamic" + tag,
                   with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }), q});
    out.push_back({"a8w8_static" + tag, with("a8w8-static", none), q});
    out.push_back({"a8w8_cast" + tag, with("a8w8-cast", none), q});
    out.push_back({"a8w8_cast_nan" + tag,
                   with("a8w8-cast",
                        [](problem::Recipe& r) { r.q_cast_overflow = quant::Overflow::nan; }),
                   q});
    out.push_back({"a4w4" + tag, with("a4w4", none), q});
    out.push_back({"a4w4_ties_away" + tag,
                   with("a4w4",
                        [](problem::Recipe& r) {
                          r.mxfp4_rounding = quant::E2M1Rounding::ties_away;
                        }),
                   q});
  }
  // MXFP4 blocks holding NaN and Inf: the block's amax ignores NaN and takes Inf (the device reduces
  // it over 16 lanes a block), and NaN as a block's first or last element.
  {
    std::vector<uint16_t> q = make_q(3, 0.02f, 11u, true);
    const std::pair<std::size_t, uint16_t> planted[] = {
        {5, 0x7FC0}, {31, 0xFFC1}, {40, 0x7F80}, {64, 0x7FC0}, {100, 0xFF80}, {127, 0x7FA0}, {129, 0x7FC0}};
    for (const auto& [at, bits] : planted) q[at] = bits;
    out.push_back({"a4w4_nan_inf", with("a4w4", none), q});
  }
  // The fp8 kernels' loops (gpu/common/q_quant.hip): element-wise below 8 tokens (5 here) and for a Q
  // not 16-byte aligned, by vectors of 8 from 8 tokens on (37 above; 300: the amax grid-stride loop
  // several times past its unrolled vectors).
  for (const bool edges : {false, true}) {
    const std::string tag = edges ? "_edges" : "_harness";
    const std::vector<uint16_t> q5 = make_q(5, 0.02f, edges ? 17u : 13u, edges);
    out.push_back({"a8w8_5_tokens" + tag, with("a8w8", none), q5});
    out.push_back({"fp8_dynamic_5_tokens" + tag,
                   with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }), q5});
  }
  {
    const std::vector<uint16_t> q = make_q(37, 0.02f, 29u, true);
    out.push_back({"a8w8_misaligned_edges", with("a8w8", none), q, 1});
    out.push_back({"fp8_dynamic_misaligned_edges",
                   with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }), q, 3});
    out.push_back({"a8w8_static_misaligned_edges", with("a8w8-static", none), q, 1});
    out.push_back({"a8w8_cast_misaligned_edges", with("a8w8-cast", none), q, 1});
  }
  {
    const std::vector<uint16_t> q = make_q_log_uniform(9, 41u);
    out.push_back({"a8w8_log_uniform", with("a8w8", none), q});
    out.push_back({"a8w8_fnuz_log_uniform",
                   with("a8w8", [](problem::Recipe& r) { r.fp8 = quant::Fp8Format::e4m3fnuz; }), q});
    out.push_back({"fp8_dynamic_log_uniform",
                   with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }), q});
    out.push_back({"a8w8_static_log_uniform", with("a8w8-static", none), q});
    out.push_back({"a8w8_cast_log_uniform", with("a8w8-cast", none), q});
  }
  // NaN in Q: the harness's amax is NaN (every code NaN), aiter's dynamic amax skips it: 5 tokens
  // and 37.
  for (const int tokens : {5, 37}) {
    std::vector<uint16_t> q = make_q(tokens, 0.02f, 37u, true);
    for (const std::size_t at : {std::size_t{3}, q.size() / 2 + 5, q.size() - 1}) q[at] = at % 2 ? 0xFFC1 : 0x7FC0;
    const std::string n = std::to_string(tokens);
    out.push_back({"a8w8_nan_" + n + "_tokens", with("a8w8", none), q});
    out.push_back({"fp8_dynamic_nan_" + n + "_tokens",
                   with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }), q});
  }
  {
    const std::vector<uint16_t> q = make_q(300, 0.02f, 31u, true);
    out.push_back({"a8w8_300_tokens_edges", with("a8w8", none), q});
    out.push_back({"fp8_dynamic_300_tokens_edges",
                   with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }), q});
  }
  out.push_back({"a8w8_all_zero", *problem::find_recipe("a8w8"), make_q(2, 0.0f, 1, false)});
  out.push_back({"fp8_dynamic_all_zero",
                 with("a8w8", [](problem::Recipe& r) { r.q = QFormat::fp8_dynamic; }),
                 make_q(2, 0.0f, 1, false)});
  return out;
}

// Built once: GoogleTest asks for the cases at registration, once per test name, and every process
// CTest starts registers the whole suite (rebuilding them each time was 0.3 s of every test's start).
const std::vector<QCase>& q_cases() {
  static const std::vector<QCase> cases = make_q_cases();
  return cases;
}

struct HostQ {
  std::vector<uint8_t> codes, block_scales;
  float scale = 0;
  bool has_scale = false;
};

HostQ host_quantize(const problem::Recipe& r, const std::vector<uint16_t>& q) {
  HostQ h;
  std::vector<float> x(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = quant::bf16_to_f32(q[i]);
  h.codes.resize(q.size());
  switch (r.q) {
    case QFormat::fp8_harness:
      h.scale = quant::fp8_harness_quantize(q, r.fp8, h.codes);
      h.has_scale = true;
      break;
    case QFormat::fp8_dynamic:
      h.scale = quant::fp8_dynamic_quantize(x, problem::kQkDim, r.fp8, h.codes);
      h.has_scale = true;
      break;
    case QFormat::fp8_static:
      h.scale = problem::static_q_scale(r);
      quant::fp8_static_quantize(x, h.scale, r.fp8, h.codes);
      h.has_scale = true;
      break;
    case QFormat::fp8_cast:
      quant::fp8_cast(x, r.fp8, r.q_cast_overflow, h.codes);
      break;
    case QFormat::mxfp4_dynamic:
      h.codes.resize(q.size() / 2);
      h.block_scales.resize(q.size() / quant::kMxfp4BlockSize);
      quant::mxfp4_quantize(x, problem::kQkDim, r.mxfp4_rounding, h.codes, h.block_scales);
      break;
    case QFormat::bf16:
    case QFormat::bf16_scaled:  // no codes: no GPU quantizer takes these (the cases are presets)
      break;
  }
  return h;
}

// Every build: the cases are what they claim (sizes, the scale of each format), so the device
// comparison below compares something.
TEST(GpuQQuantCases, HostSideIsWellFormed) {
  for (const QCase& c : q_cases()) {
    const HostQ h = host_quantize(c.recipe, c.q);
    const bool mx = c.recipe.q == QFormat::mxfp4_dynamic;
    EXPECT_EQ(h.codes.size(), mx ? c.q.size() / 2 : c.q.size()) << c.name;
    EXPECT_EQ(h.block_scales.size(), mx ? c.q.size() / 32 : 0u) << c.name;
    if (c.recipe.q == QFormat::fp8_harness) {  // a bf16 value (NUMERICS §4 step 3), NaN where Q holds one
      if (std::isnan(h.scale)) {
        EXPECT_NE(c.name.find("nan"), std::string::npos) << c.name;
      } else {
        EXPECT_EQ(quant::bf16_to_f32(quant::f32_to_bf16(h.scale)), h.scale) << c.name;
      }
    }
    if (c.recipe.q == QFormat::fp8_static) {
      EXPECT_EQ(h.scale, problem::static_q_scale(c.recipe)) << c.name;
    }
  }
}

class GpuQQuant : public ::testing::TestWithParam<std::size_t> {};

TEST_P(GpuQQuant, DeviceMatchesQuantBulkBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const QCase& c = q_cases().at(GetParam());
  const HostQ want = host_quantize(c.recipe, c.q);
  const DeviceQuantizedQ got = quantize_q_on_device(c.recipe, c.q, c.q_offset);
  ASSERT_EQ(got.codes.size(), want.codes.size());
  int wrong = 0;
  for (std::size_t i = 0; i < want.codes.size(); ++i)
    if (got.codes[i] != want.codes[i] && ++wrong <= 8)
      ADD_FAILURE() << c.name << ": code " << i << " (input bf16 0x" << std::hex
                    << c.q[c.recipe.q == QFormat::mxfp4_dynamic ? 2 * i : i] << "): device 0x"
                    << +got.codes[i] << ", host 0x" << +want.codes[i] << std::dec;
  EXPECT_EQ(wrong, 0) << c.name;
  EXPECT_EQ(got.block_scales, want.block_scales) << c.name;
  if (want.has_scale) {
    uint32_t g = 0, w = 0;
    std::memcpy(&g, &got.scale, 4);
    std::memcpy(&w, &want.scale, 4);
    EXPECT_EQ(g, w) << c.name << ": scale " << got.scale << " vs " << want.scale;
  }
#endif
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& param) {
  return q_cases().at(param.param).name;
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuQQuant, ::testing::Range<std::size_t>(0, q_cases().size()),
                         case_name);

}  // namespace
}  // namespace mlacheck::gpu
