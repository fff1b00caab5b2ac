// The gate on harness-like data: what it must reject, what it must accept.
#include "check/gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "check/report_text.h"
#include "check/ulp.h"
#include "problem/recipe.h"
#include "quant/bf16.h"
#include "tests/check/harness_like.h"

namespace mlacheck::check {
namespace {

using testing::harness_like;
using testing::to_bf16;
using testing::widen;

// A plausible emulated output of a recipe: the exact output with relative noise of the recipe's
// size (a fifth of its V error, as seen in practice), rounded to bf16. Not the real emulation:
// the gate's verdicts below do not depend on how close it is, only on where the output lies.
std::vector<uint16_t> emulated_like(const testing::HarnessLike& h, const problem::Recipe& r,
                                    uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, v_relative_error(r, h.data) / 5);
  std::vector<float> e(h.exact);
  for (float& x : e) x = static_cast<float>(x * (1 + noise(rng)));
  return to_bf16(e);
}

// The exact value with a tiny fp32 perturbation (a reordered fp32 sum), then rounded to bf16.
std::vector<uint16_t> reordered(const std::vector<float>& x, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> ulps(-8, 8);
  std::vector<float> y(x);
  for (float& v : y) {
    const int k = ulps(rng);
    for (int i = 0; i < std::abs(k); ++i) v = std::nextafter(v, k > 0 ? 1.0f : -1.0f);
  }
  return to_bf16(y);
}

TEST(CheckGate, RejectsAllZerosThatTheHarnessAccepts) {
  const auto h = harness_like(4, 1024, 11);
  // Harness-sized outputs: ~1e-4 .. 2e-3.
  double max_abs = 0;
  for (float x : h.exact) max_abs = std::max(max_abs, double{std::fabs(x)});
  ASSERT_GT(max_abs, 1e-3);
  ASSERT_LT(max_abs, 3e-3);
  const std::vector<float> zeros(h.exact.size(), 0.0f);
  for (const problem::Recipe& r : problem::recipes()) {
    const auto emu = emulated_like(h, r, 12);
    const Gate gate(r, h.data, h.layout, h.exact, emu);
    const GateReport z = gate.judge(zeros);
    EXPECT_TRUE(z.harness.pass) << r.name << ": the harness's check accepts all zeros";
    EXPECT_FALSE(z.total.pass()) << r.name << "\n" << format_gate(z);
    EXPECT_FALSE(z.pass()) << r.name;
    // ... and the plausible emulated output itself passes the total bound.
    const GateReport e = gate.judge(widen(emu));
    EXPECT_TRUE(e.total.pass()) << r.name << "\n" << format_gate(e);
    EXPECT_TRUE(e.pass()) << r.name;
  }
}

TEST(CheckGate, AcceptsACorrectButReorderedOutput) {
  const auto h = harness_like(4, 1024, 21);
  for (const problem::Recipe& r : problem::recipes()) {
    // The emulation and the kernel computed the same fp32 values up to reordering noise.
    const auto emu_f32 = widen(emulated_like(h, r, 22));
    const auto emu = reordered(emu_f32, 23);
    const auto out = widen(reordered(emu_f32, 24));
    const GateReport g = Gate(r, h.data, h.layout, h.exact, emu).judge(out);
    ASSERT_TRUE(g.kernel.has_value());
    EXPECT_LE(g.kernel->ulps.max, 1u) << r.name;
    EXPECT_TRUE(g.kernel->pass()) << r.name << "\n" << format_gate(g);
    EXPECT_TRUE(g.pass()) << r.name;
  }
}

// One element moved by k bf16 steps from the emulated value.
std::vector<float> nudged(const std::vector<uint16_t>& emu, std::size_t i, int k) {
  auto out = widen(emu);
  out[i] = quant::bf16_to_f32(static_cast<uint16_t>(emu[i] + k));
  return out;
}

TEST(CheckGate, KernelBoundOnOneElementBothSides) {
  // kv 8192, the harness's long case. The kernel bound is 1.5 ulps of the value plus absolute
  // terms that are a small fraction of an ulp here, except where a P code or a bf16 partial can
  // flip. For recipes where nothing can flip (a8w8: P is always exactly 1 on harness data) or
  // P is bf16 (a16w16: a flip moves one weight of ~1/8192 by 2^-7), 4 ulps is a kernel bug and 1
  // ulp is not.
  const auto h = harness_like(2, 8192, 31);
  // An element of typical size, positive, away from a binade edge.
  std::size_t i = 0;
  while (!(h.exact[i] > 3e-4f && h.exact[i] < 4.5e-4f)) ++i;
  for (const char* name : {"a16w16", "a8w8"}) {
    const problem::Recipe r = *problem::find_recipe(name);
    const auto emu = to_bf16(h.exact);
    const Gate gate(r, h.data, h.layout, h.exact, emu);
    EXPECT_TRUE(gate.judge(nudged(emu, i, 1)).kernel->pass()) << name;
    const GateReport four = gate.judge(nudged(emu, i, 4));
    EXPECT_FALSE(four.kernel->pass()) << name << "\n" << format_gate(four);
    EXPECT_EQ(four.kernel->compared - four.kernel->elements_within, 1) << name;
    EXPECT_EQ(four.kernel->worst[0].index, static_cast<int64_t>(i));
    // The total bound cannot see 4 ulps on one element: that is what the kernel bound is for.
    EXPECT_TRUE(four.total.pass()) << name;
  }
  // Every recipe, both sides of its own element tolerance: the largest whole number of ulps
  // within it passes, one more fails.
  for (const problem::Recipe& r : problem::recipes()) {
    const auto emu = to_bf16(h.exact);
    const Gate gate(r, h.data, h.layout, h.exact, emu);
    const double ulp = bf16_ulp(quant::bf16_to_f32(emu[i]));
    const int within = static_cast<int>(std::floor(
        gate.kernel_bound().element_tolerance(h.layout.position(static_cast<int64_t>(i)).token, 0,
                                              quant::bf16_to_f32(emu[i]), 0.0) /
        ulp));
    ASSERT_GE(within, 1) << r.name;
    EXPECT_TRUE(gate.judge(nudged(emu, i, within)).kernel->pass()) << r.name << " " << within;
    EXPECT_FALSE(gate.judge(nudged(emu, i, within + 1)).kernel->pass()) << r.name << " " << within;
  }
}

TEST(CheckGate, NanInTheOutputFailsFirst) {
  const auto h = harness_like(1, 256, 41);
  const problem::Recipe r = *problem::find_recipe("a8w8");
  const auto emu = to_bf16(h.exact);
  const Gate gate(r, h.data, h.layout, h.exact, emu);
  auto out = widen(emu);
  out[77] = std::nanf("");
  const GateReport g = gate.judge(out);
  EXPECT_FALSE(g.pass());
  EXPECT_EQ(g.total.anomalies.mismatches, 1);
  EXPECT_EQ(g.total.anomalies.first.at(0), 77);
  EXPECT_FALSE(g.harness.pass);  // the harness catches this one too
  ASSERT_FALSE(g.reasons().empty());
  EXPECT_NE(g.reasons()[0].find("NaN/Inf"), std::string::npos);
}

TEST(CheckGate, EmptySequenceRowsMustBeZero) {
  // Request 0 has no keys: exact output 0 (ref/'s convention); request 1 has 64.
  const auto h = harness_like(1, 64, 51);
  const problem::Batch batch({0, 1, 2}, {0, 0, 64}, {}, 1, 64);
  const auto layout = OutputLayout::from_batch(batch);
  std::vector<float> exact(static_cast<std::size_t>(layout.elements()), 0.0f);
  std::copy(h.exact.begin(), h.exact.end(), exact.begin() + 16 * 512);
  const problem::Recipe r = *problem::find_recipe("a16w16");
  const auto emu = to_bf16(exact);
  const Gate gate(r, h.data, layout, exact, emu);
  EXPECT_TRUE(gate.judge(widen(emu)).pass());
  auto out = widen(emu);
  out[5] = 1e-6f;  // a little garbage in the empty row
  const GateReport g = gate.judge(out);
  EXPECT_FALSE(g.total.pass());
  EXPECT_FALSE(g.kernel->pass());
  EXPECT_TRUE(g.harness.pass);
}

TEST(CheckGate, WithoutEmulatedOutputOnlyTheTotalIsChecked) {
  const auto h = harness_like(1, 256, 61);
  const Gate gate(*problem::find_recipe("a16w8"), h.data, h.layout, h.exact, {});
  const GateReport g = gate.judge(widen(to_bf16(h.exact)));
  EXPECT_FALSE(g.kernel.has_value());
  EXPECT_TRUE(g.pass());
  EXPECT_EQ(g.harness_reference, "exact (rounded to bf16)");
  EXPECT_THROW(Gate(*problem::find_recipe("a16w8"), h.data, h.layout,
                    std::span<const float>(h.exact).first(10), {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace mlacheck::check
