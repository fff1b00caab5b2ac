#pragma once
// NaN and ±Inf are compared by position before any number (like FlashMLA's kernelkit compare):
// a NaN where the reference has a number, or a number where it has Inf, is a failure on its own,
// and the elements that are not finite in both are left out of every numeric metric.
#include <cstdint>
#include <span>
#include <vector>

namespace mlacheck::check {

enum class ValueClass : uint8_t { finite, nan, pos_inf, neg_inf };
ValueClass classify(float x);

struct SpecialCounts {
  int64_t nan = 0, pos_inf = 0, neg_inf = 0;
  int64_t total() const { return nan + pos_inf + neg_inf; }
  void add(ValueClass c);
};

struct AnomalyReport {
  static constexpr std::size_t kFirstPositions = 8;  // flat indices kept for the report

  SpecialCounts got, ref;
  int64_t mismatches = 0;      // positions whose classes differ
  std::vector<int64_t> first;  // the first kFirstPositions of them, in index order
  bool ok() const { return mismatches == 0; }
};

// Counts and compares the classes of got[i] and ref[i] (same length).
AnomalyReport compare_anomalies(std::span<const float> got, std::span<const float> ref);

}  // namespace mlacheck::check
