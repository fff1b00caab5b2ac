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

#include "check/report_text.h"
#include "gpu/availability.h"
#include "gpu/registry.h"
#include "tests/gpu/decode_cases.h"
#include "tests/gpu/gate_run.h"

#if defined(MLACHECK_HAVE_SM90A)
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
        const test::GateVerdict v = test::run_through_gate(s, c, cache, c.emulated(s, plan));
        EXPECT_TRUE(v.gate.pass()) << check::format_gate(v.gate);
        EXPECT_TRUE(v.lse.pass()) << test::describe_lse(v.lse);
        ++judged;
      }
    }
  }
  // 7 strategies x 2 chunk sizes x the 14 quick cases, less the unsupported pairs: a floor well
  // under the count, so that a skip spreading over the suite fails here instead of passing empty.
  EXPECT_GT(judged, 40);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
