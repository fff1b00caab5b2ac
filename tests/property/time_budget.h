#pragma once
// RapidCheck properties run for a fixed time instead of a fixed number of cases (the GPU
// properties on the device, issue 12 item 2): rounds of kRoundCases cases, each round a whole
// RapidCheck run (sizes 0..max_size, shrinking on failure) with the next seed, until the budget
// is spent. A round that has started runs to its end, so the overrun is at most one round, whose
// cases the generator's work cap bounds (case_gen.h). The first failing round fails the current
// GoogleTest test with RapidCheck's report: the minimal case and the RC_PARAMS that reproduce it.
#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace mlacheck::property {

inline constexpr int kRoundCases = 5;

// MLACHECK_PROPERTY_SECONDS when set (a positive number; anything else throws
// std::invalid_argument), else `default_seconds`.
double property_seconds(double default_seconds);

struct BudgetReport {
  int rounds = 0;
  int64_t cases = 0;  // cases that ran and passed
  double seconds = 0;
  bool passed = true;
};

template <class Testable>
BudgetReport check_for(double seconds, Testable&& testable) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = kRoundCases;
  BudgetReport report;
  do {
    const rc::detail::TestResult result = rc::detail::checkTestable(testable, metadata, params);
    ++report.rounds;
    if (!result.template is<rc::detail::SuccessResult>()) {
      std::ostringstream message;
      rc::detail::printResultMessage(result, message);
      ADD_FAILURE() << "round " << report.rounds << " (seed " << params.seed << "): " << message.str();
      report.passed = false;
      break;
    }
    report.cases += result.template get<rc::detail::SuccessResult>().numSuccess;
    ++params.seed;
    report.seconds = std::chrono::duration<double>(clock::now() - start).count();
  } while (report.seconds < seconds);
  report.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return report;
}

}  // namespace mlacheck::property
