// The GPU decode suite: one abstract test instantiated for every registry entry (gpu/registry.h)
// and every case of decode_cases.h (harness shapes, ragged batches, paged caches with page sizes
// 1, 16 and 64, q_seq_len 2 and 4, empty sequences, peaked attention). Each run goes through the
// poisoned device copies of gpu/device_problem.h and is judged like `mlacheck verify`: the gate of
// check/ (kernel error against the emulated recipe with the strategy's own split count, total
// error against the exact output) plus the LSE against the emulated LSE. An unsupported (case,
// strategy) is a skip with its reason; no GPU is a skip with gpu::unavailable_reason().
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <tuple>

#include "check/report_text.h"
#include "gpu/availability.h"
#include "gpu/registry.h"
#include "tests/gpu/decode_cases.h"
#include "tests/gpu/gate_run.h"

namespace mlacheck::gpu {
namespace {

using Param = std::tuple<std::size_t, std::size_t>;  // (registry index, case index)

class GpuDecode : public ::testing::TestWithParam<Param> {};

TEST_P(GpuDecode, MatchesTheEmulatedRecipeThroughTheGate) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const Strategy& s = strategies().at(std::get<0>(GetParam()));
  const ref::CaseSpec spec = test::decode_cases().at(std::get<1>(GetParam()));
  test::PreparedCase& c = test::prepared(spec.name);
  const ref::Inputs& in = c.inputs();
  const problem::KvCache cache = c.cache_for(s.recipe);
  if (const auto why = s.supports(in.batch, cache)) GTEST_SKIP() << "unsupported: " << *why;
  const ref::EmulatedResult& emu = c.emulated(s, s.emulated_plan(in.batch, planning_multiprocessors()));
  const test::GateVerdict v = test::run_through_gate(s, c, cache, emu);
  EXPECT_TRUE(v.gate.pass()) << s.name << " on " << spec.name << "\n" << check::format_gate(v.gate);
  // LSE: same -inf rows, finite values within check/lse.h's tolerance.
  EXPECT_TRUE(v.lse.pass()) << s.name << " on " << spec.name << ": " << test::describe_lse(v.lse);
#endif
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string name = strategies().at(std::get<0>(info.param)).name + "__" +
                     test::decode_cases().at(std::get<1>(info.param)).name;
  for (char& ch : name)
    if (std::isalnum(static_cast<unsigned char>(ch)) == 0) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Gpu, GpuDecode,
    ::testing::Combine(::testing::Range<std::size_t>(0, strategies().size()),
                       ::testing::Range<std::size_t>(0, test::decode_cases().size())),
    param_name);

}  // namespace
}  // namespace mlacheck::gpu
