// Every kernel strategy of the matrix-unit families (mma, hopper) gives the same output and LSE
// bits on every run of the same problem. Their schedules fix every float operation's order (the
// split plan, the merge's order, a work item's keys whichever SM takes it), so a difference between
// two runs is a race: a read of shared or global memory before its write landed, or after the next
// one did. Such a race in the decoded hopper kernels (a ring part released before the loads from it
// had returned) made verify fail at random, on standard-tier ragged and contiguous cases but never
// on the quick tier (docs/PERF.md, "Device runs 1-8 of 2026-12-02's sixth session"), so the cases
// here are standard-tier sizes: many tiles a block, every SM busy. Skips without a usable GPU. No
// reference is computed: the check is run against run.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/registry.h"
#include "ref/case_list.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "tests/gpu/bit_differences.h"
#include "tests/support/test_data.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#endif

namespace mlacheck::gpu {
namespace {

// Runs per (strategy, case): the race above failed about every other verify of its case.
constexpr int kRuns = 6;
// Standard-tier cases (data/cases/standard.txt): ragged, ragged with q_len 4, paged (64).
const char* const kCases[] = {"ragged_bs64_kv4096", "q4_ragged_bs32_kv2048", "paged_p64_bs32_kv4096"};

TEST(GpuDeterminism, RepeatedRunsGiveTheSameBits) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const std::vector<ref::CaseSpec> specs =
      ref::read_case_list((testing::data_dir() / "cases" / "standard.txt").string());
  int checked = 0;
  for (const char* name : kCases) {
    const ref::CaseSpec* spec = nullptr;
    for (const ref::CaseSpec& s : specs)
      if (s.name == name) spec = &s;
    ASSERT_NE(spec, nullptr) << name << " is not in data/cases/standard.txt";
    const ref::Inputs in = ref::generate(*spec);
    ref::KvCaches caches(in.kv, in.batch.cache_rows());
    DeviceProblem device(in.batch, in.q);
    for (const Strategy& s : strategies()) {
      if (s.family->id == FamilyId::portable) continue;  // the reference kernels: slow, and plain
      const problem::KvCache cache = caches.for_recipe(s.recipe);
      if (s.supports(in.batch, cache)) continue;  // another vendor's family, or an unsupported case
      SCOPED_TRACE(s.name + " on " + name);
      const RunResult first = device.run(s, cache);
      for (int r = 1; r < kRuns; ++r) {
        const RunResult again = device.run(s, cache);
        ASSERT_EQ(again.out.size(), first.out.size());
        ASSERT_EQ(again.lse.size(), first.lse.size());
        const test::BitDifferences d = test::bit_differences(again.out, first.out, again.lse, first.lse);
        EXPECT_EQ(d.out, 0u) << "output elements that differ between run 1 and run " << r + 1;
        EXPECT_EQ(d.lse, 0u) << "LSE entries that differ between run 1 and run " << r + 1;
        if (d.out + d.lse > 0) break;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << "no kernel strategy ran: every one refused these cases";
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
