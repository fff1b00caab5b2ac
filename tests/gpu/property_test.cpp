// Properties of the GPU strategies on random cases (RapidCheck, issue 12 item 2, GPU part), with
// the generator of the CPU properties (tests/property/case_gen.h) and for a fixed time each
// (MLACHECK_PROPERTY_SECONDS, default kSeconds; tests/property/time_budget.h):
//   - every strategy that supports a case passes the gate against its emulated recipe, judged as
//     tests/gpu/decode_test.cpp judges the fixed cases (check/ gate + LSE);
//   - permuting the page table changes no bit of any strategy's output;
//   - NaN in the cache rows no request reads changes no bit.
// Host caches are never poisoned (CaseOptions::poison_unused = false): the device copies always
// hold NaN in every unused row (gpu/device_problem.h), and the host's FP8 scale must see the real
// rows only. With no usable GPU every test skips with gpu::unavailable_reason().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpu/availability.h"
#include "tests/property/case_gen.h"
#include "tests/property/time_budget.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include <rapidcheck.h>

#include "check/gate.h"
#include "check/lse.h"
#include "check/report_text.h"
#include "cli/golden_case.h"
#include "gpu/device_problem.h"
#include "gpu/registry.h"
#include "problem/shape.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "tests/gpu/decode_cases.h"
#include "tests/ref/test_support.h"
#endif

namespace mlacheck::gpu {
namespace {

// Seconds per property on the device by default; the suite's three take three times this.
constexpr double kSeconds = 60;
// Query-key pairs a case may hold at RapidCheck's size 100 (case_gen.h): one case runs every
// strategy's emulation on the host (about 30 of them), so cases stay a few times smaller than the
// fixed GPU cases of data/cases/quick.txt; MLACHECK_PROPERTY_WORK raises it.
constexpr int64_t kWork = 100000;

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
property::CaseOptions options() { return {property::property_work(kWork), 1, false}; }

void report(const property::BudgetReport& r) {
  ::testing::Test::RecordProperty("rounds", r.rounds);
  ::testing::Test::RecordProperty("cases", static_cast<int>(r.cases));
  ::testing::Test::RecordProperty("seconds", std::to_string(r.seconds));
  std::printf("[ property ] %lld cases in %d rounds, %.1f s\n", static_cast<long long>(r.cases), r.rounds,
              r.seconds);
}

// A batch of no request is a host-side question (the CPU properties decode it); on the device it
// would only test allocating nothing, so it becomes one request. (Not RC_PRE: at the small sizes a
// round of kRoundCases starts with, most draws have batch 0 and RapidCheck gave up after 0 tests,
// device run 6.)
property::Case device_case() {
  property::Case c = *property::cases(options());
  if (c.spec.batch == 0) c.spec.batch = 1;
  return c;
}

// Every strategy that supports the layout, run once on it: name -> output.
std::map<std::string, RunResult> run_every_strategy(const problem::Batch& batch,
                                                    std::span<const uint16_t> q,
                                                    std::span<const uint16_t> kv) {
  ref::KvCaches caches(kv, batch.cache_rows());
  DeviceProblem device(batch, q);
  std::map<std::string, RunResult> out;
  for (const Strategy& s : strategies()) {
    const problem::KvCache cache = caches.for_recipe(s.recipe);
    if (s.supports(batch, cache)) continue;
    out.emplace(s.name, device.run(s, cache));
  }
  return out;
}

// The strategies that ran on both layouts give the same bits, and the same strategies ran.
void require_same_bits(const std::map<std::string, RunResult>& a, const std::map<std::string, RunResult>& b,
                       const std::string& what) {
  RC_ASSERT(a.size() == b.size());
  for (const auto& [name, run] : a) {
    const auto other = b.find(name);
    if (other == b.end()) RC_FAIL(name + " runs on one layout only (" + what + ")");
    if (const auto same = ref::test::same_bits(run.out, other->second.out); !same)
      RC_FAIL(name + ", " + what + " (out): " + same.message());
    if (const auto same = ref::test::same_bits(run.lse, other->second.lse); !same)
      RC_FAIL(name + ", " + what + " (lse): " + same.message());
  }
  RC_TAG(a.empty() ? "no strategy supports it" : "compared");
}

// The same keys with every page moved to an odd page number of a cache of 2·pages + 1 pages, so
// each page of keys lies between two pages no request uses; the device copy fills those with NaN
// (gpu/device_problem.h), as it does the tails of partly used pages. The host rows stay 0.
ref::Inputs spread_pages(const ref::Inputs& in) {
  const int64_t ps = in.batch.page_size();
  const int64_t pages = in.batch.cache_rows() / ps;
  const int64_t row = ps * problem::kQkDim;
  std::vector<uint16_t> kv(static_cast<std::size_t>((2 * pages + 1) * row), 0);
  for (int64_t p = 0; p < pages; ++p)
    std::copy_n(in.kv.begin() + p * row, row, kv.begin() + (2 * p + 1) * row);
  std::vector<int32_t> indices(in.batch.kv_indices().begin(), in.batch.kv_indices().end());
  for (int32_t& x : indices) x = 2 * x + 1;
  problem::Batch batch({in.batch.qo_indptr().begin(), in.batch.qo_indptr().end()},
                       {in.batch.kv_indptr().begin(), in.batch.kv_indptr().end()}, std::move(indices),
                       in.batch.page_size(), (2 * pages + 1) * ps);
  return {std::move(batch), in.q, std::move(kv)};
}

ref::Inputs paged(const property::Case& c) {
  ref::CaseSpec s = c.spec;
  s.shuffle_pages = true;  // always a page table (ref/layout.h), whatever the page size
  return ref::generate(s);
}
#endif

TEST(GpuProperty, EveryStrategyPassesTheGateAgainstItsEmulation) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  report(property::check_for(property::property_seconds(kSeconds), [] {
    const property::Case c = device_case();
    test::PreparedCase pc(c.spec);
    const ref::Inputs& in = pc.inputs();
    DeviceProblem device(in.batch, in.q);
    int judged = 0;
    for (const Strategy& s : strategies()) {
      const problem::KvCache cache = pc.cache_for(s.recipe);
      if (s.supports(in.batch, cache)) continue;
      const ref::EmulatedResult& emu = pc.emulated(s, s.emulated_plan(in.batch, planning_multiprocessors()));
      const RunResult r = device.run(s, cache);
      const std::vector<float> out = cli::widen_bf16(r.out);
      const check::Gate gate(s.recipe, pc.data(), pc.layout(), pc.exact().out, emu.out);
      const check::GateReport g = gate.judge(out);
      if (!g.pass()) RC_FAIL(s.name + "\n" + check::format_gate(g));
      const check::LseReport lse = check::check_lse(r.lse, emu.lse, pc.layout());
      if (!lse.pass())
        RC_FAIL(s.name + ": lse[" + std::to_string(lse.worst_index) + "] " + std::to_string(lse.worst_got) +
                " vs emulated " + std::to_string(lse.worst_ref) + " (" + std::to_string(lse.worst_units) +
                " units, bound there " + std::to_string(lse.worst_allowed_units) + "), " + std::to_string(lse.class_mismatches) + " -inf/NaN mismatches");
      ++judged;
    }
    RC_TAG(judged == 0 ? "no strategy supports it" : "judged");
  }));
#endif
}

TEST(GpuProperty, PermutingThePageTableChangesNoBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  report(property::check_for(property::property_seconds(kSeconds), [] {
    const property::Case c = device_case();
    const auto move_seed = *rc::gen::arbitrary<uint64_t>();
    const ref::Inputs in = paged(c);
    const ref::test::Permuted moved = ref::test::permute_pages(in.batch, in.kv, move_seed);
    require_same_bits(run_every_strategy(in.batch, in.q, in.kv),
                      run_every_strategy(moved.batch, in.q, moved.kv), "pages moved by the page table");
  }));
#endif
}

TEST(GpuProperty, NaNInUnusedRowsChangesNoBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  report(property::check_for(property::property_seconds(kSeconds), [] {
    const property::Case c = device_case();
    const ref::Inputs in = paged(c);
    const ref::Inputs spread = spread_pages(in);
    require_same_bits(run_every_strategy(in.batch, in.q, in.kv),
                      run_every_strategy(spread.batch, spread.q, spread.kv),
                      "a NaN page beside every page of keys");
  }));
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
