// The hopper persistent strategies under chunked plans (`bench --chunks`: fixed work items taken by
// whichever block comes first, every request's pieces merged by the merge kernel, one-piece
// requests included), which the decode suite never runs (its rows take the balanced plan):
// through the gate (kernel error against the emulated recipe with the same plan, total error
// against the exact output, the LSE against the emulated LSE), on every quick case, with chunks of
// 64 and 192 keys (a long request cut into many pieces, a short one whole). So that a bench row of
// a chunked variant times a kernel known to be right. Skips without a usable GPU, on a device that
// is not compute capability 9.0, and in builds without sm_90a code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check/gate.h"
#include "check/lse.h"
#include "check/report_text.h"
#include "gpu/availability.h"
#include "gpu/registry.h"
#include "quant/bf16.h"
#include "tests/gpu/decode_cases.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/device_problem.h"
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuHopperChunkedPlan, PassesTheGateOnEveryQuickCase) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  int judged = 0;
  for (const Strategy* base : match_strategies("*/persistent/hopper")) {
    for (const int chunk_keys : {64, 192}) {
      Strategy s = *base;
      s.tunables.chunk_keys = chunk_keys;
      for (const ref::CaseSpec& spec : test::decode_cases()) {
        SCOPED_TRACE(spec.name + ", " + s.name + ", chunks of " + std::to_string(chunk_keys) + " keys");
        test::PreparedCase& c = test::prepared(spec.name);
        const ref::Inputs& in = c.inputs();
        const problem::KvCache cache = c.cache_for(s.recipe);
        if (s.supports(in.batch, cache)) continue;
        const problem::SplitPlan plan = s.emulated_plan(in.batch, planning_multiprocessors());
        ASSERT_EQ(plan.chunk_keys, chunk_keys) << "the variant does not run a chunked plan";
        const ref::EmulatedResult& emu = c.emulated(s, plan);
        DeviceProblem device(in.batch, in.q);
        const RunResult r = device.run(s, cache);
        std::vector<float> out(r.out.size());
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = quant::bf16_to_f32(r.out[i]);
        const check::Gate gate(s.recipe, c.data(), c.layout(), c.exact().out, emu.out);
        const check::GateReport report = gate.judge(out);
        EXPECT_TRUE(report.pass()) << check::format_gate(report);
        const check::LseReport lse = check::check_lse(r.lse, emu.lse, c.layout());
        EXPECT_TRUE(lse.pass()) << lse.class_mismatches << " -inf/NaN mismatches; worst lse[" << lse.worst_index / 16
                                << "][" << lse.worst_index % 16 << "] = " << lse.worst_got << ", emulated "
                                << lse.worst_ref << " (" << lse.worst_units << " units)";
        ++judged;
      }
    }
  }
  EXPECT_GT(judged, 40);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
