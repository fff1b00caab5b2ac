// DecodeParams::reuse_plan (gpu/params.h): a launch on a workspace that already holds the batch's
// balanced work list, which skips the work-list kernel, gives the bits of a launch that makes it,
// on every quick case (ragged, paged, q_len 2 and 4, empty requests) and every hopper persistent
// strategy; the partials and outputs are poisoned in between, so the reusing launch computes them
// afresh and only the list survives. A chunked plan (the mma family's persistent schedule) refuses
// reuse. Skips without a usable GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/registry.h"
#include "gpu/workspace.h"
#include "tests/gpu/bit_differences.h"
#include "tests/gpu/decode_cases.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#include "gpu/platform.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuPlanReuse, ReusedBalancedWorkListGivesTheSameBits) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  int compared = 0;
  for (const Strategy* s : match_strategies("*/persistent/hopper")) {
    if (const auto missing = not_built_here(*s->family)) GTEST_SKIP() << *missing;
    test::for_each_supported_case(*s, [&](const ref::CaseSpec&, test::PreparedCase& c, const problem::KvCache& cache) {
      const ref::Inputs& in = c.inputs();
      DeviceProblem device(in.batch, in.q);
      const RunResult planned = device.run(*s, cache);  // makes the list (and poisons all first)
      DecodeParams p = device.params(*s, cache);
      const WorkspaceLayout w = s->workspace_layout(in.batch, p.multiprocessors);
      ASSERT_NE(w.block_head, WorkspaceLayout::kAbsent) << "not a balanced plan";
      // Everything but the work list poisoned: outputs, partials.
      auto* ws = static_cast<unsigned char*>(p.workspace);
      ASSERT_EQ(hipMemset(p.out, 0xFF, planned.out.size() * sizeof(uint16_t)), hipSuccess);
      ASSERT_EQ(hipMemset(p.lse, 0xFF, planned.lse.size() * sizeof(float)), hipSuccess);
      if (w.part_o != WorkspaceLayout::kAbsent) {  // the o partials: part_o up to part_lse
        ASSERT_EQ(hipMemset(ws + w.part_o, 0xFF, w.part_lse - w.part_o), hipSuccess);
      }
      p.reuse_plan = true;
      s->launch(p, device.stream());
      ASSERT_EQ(hipStreamSynchronize(static_cast<hipStream_t>(device.stream())), hipSuccess);
      std::vector<uint16_t> out(planned.out.size());
      std::vector<float> lse(planned.lse.size());
      ASSERT_EQ(hipMemcpy(out.data(), p.out, out.size() * sizeof(uint16_t), hipMemcpyDeviceToHost), hipSuccess);
      ASSERT_EQ(hipMemcpy(lse.data(), p.lse, lse.size() * sizeof(float), hipMemcpyDeviceToHost), hipSuccess);
      const test::BitDifferences d = test::bit_differences(out, planned.out, lse, planned.lse);
      EXPECT_EQ(d.out, 0u) << "output elements that differ";
      EXPECT_EQ(d.lse, 0u) << "LSE entries that differ";
      ++compared;
    });
  }
  EXPECT_GT(compared, 20);
#endif
}

TEST(GpuPlanReuse, ChunkedPlanRefusesReuse) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const Strategy* s = find_strategy("a16w16/persistent/mma");
  ASSERT_NE(s, nullptr);
  test::PreparedCase& c = test::prepared(test::decode_cases().front().name);
  const ref::Inputs& in = c.inputs();
  const problem::KvCache cache = c.cache_for(s->recipe);
  DeviceProblem device(in.batch, in.q);
  DecodeParams p = device.params(*s, cache);
  ASSERT_GT(s->emulated_plan(in.batch, p.multiprocessors).chunk_keys, 0) << "not a chunked plan";
  p.reuse_plan = true;
  EXPECT_THROW(s->launch(p, device.stream()), std::invalid_argument);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
