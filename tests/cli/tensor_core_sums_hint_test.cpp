// cli/tensor_core_sums_hint.h: the line compare prints where the schedule-free kernel bound's known
// gap (regrouped tensor-core runs, fp8-acc tc64 / tc) may explain a failure, and only there.
#include <gtest/gtest.h>

#include "check/gate.h"
#include "cli/tensor_core_sums_hint.h"
#include "problem/recipe.h"

namespace mlacheck::cli {
namespace {

check::Metrics judged(bool pass) {
  check::Metrics m;
  m.has_bound = true;
  m.compared = m.rows = 10;
  m.elements_within = pass ? 10 : 9;
  m.rows_within = pass ? 10 : 9;
  return m;
}

check::GateReport report(bool total_pass, bool kernel_pass) {
  check::GateReport r;
  r.total = judged(total_pass);
  r.kernel = judged(kernel_pass);
  return r;
}

problem::Recipe with_sums(problem::Fp8Accumulation acc) {
  problem::Recipe r = *problem::find_recipe("a8w8");
  r.fp8_acc = acc;
  return r;
}

TEST(CliTensorCoreSumsHint, OnlyWhereTheScheduleFreeKernelBoundFailsTensorCoreSums) {
  using problem::Fp8Accumulation;
  ASSERT_TRUE(report(true, true).total.pass());
  ASSERT_FALSE(report(true, false).kernel->pass());
  // The one case: tc64 or tc sums, no schedule, only the kernel bound failed.
  for (const Fp8Accumulation acc : {Fp8Accumulation::tc64, Fp8Accumulation::tc}) {
    const auto hint = tensor_core_sums_hint(with_sums(acc), false, report(true, false));
    ASSERT_TRUE(hint.has_value());
    EXPECT_NE(hint->find("--schedule"), std::string::npos);
    EXPECT_NE(hint->find(std::string(problem::to_string(acc))), std::string::npos);
  }
  const problem::Recipe tc64 = with_sums(Fp8Accumulation::tc64);
  EXPECT_FALSE(tensor_core_sums_hint(tc64, true, report(true, false)));    // the schedule declared
  EXPECT_FALSE(tensor_core_sums_hint(tc64, false, report(true, true)));    // passed
  EXPECT_FALSE(tensor_core_sums_hint(tc64, false, report(false, false)));  // the total bound failed too
  EXPECT_FALSE(tensor_core_sums_hint(with_sums(Fp8Accumulation::f32), false, report(true, false)));
  check::GateReport no_emulation = report(true, false);
  no_emulation.kernel.reset();
  EXPECT_FALSE(tensor_core_sums_hint(tc64, false, no_emulation));
}

}  // namespace
}  // namespace mlacheck::cli
