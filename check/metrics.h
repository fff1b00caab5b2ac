#pragma once
// The error statistics of one comparison (got vs ref, both [T, 16, 512]), reported like FlashMLA's
// kernelkit compare: NaN/±Inf positions first; then max abs and rel error, relative Frobenius
// error, cosine similarity of the whole tensor and of the worst (token, head) row, a histogram of
// bf16 ulp distances, and, against a Bound, the pass percentage and the worst elements with their
// positions and values.
#include <cstdint>
#include <span>
#include <vector>

#include "check/anomalies.h"
#include "check/layout.h"
#include "check/tolerance.h"
#include "check/ulp.h"

namespace mlacheck::check {

struct ElementReport {
  int64_t index = -1;  // flat index into [T, 16, 512]; -1 = none
  Position pos;
  double got = 0, ref = 0, abs_err = 0;
  double tolerance = 0;  // what the bound allowed there (0 without a bound)
  uint32_t ulps = 0;     // bf16 ulp distance of the two values rounded to bf16
};

struct RowReport {
  int64_t token = -1;  // -1 = no row
  int64_t request = -1;
  int head = 0;
  double cosine = 1;       // cosine similarity of the row
  double rel_rms_err = 0;  // RMS(got - ref) / RMS(ref)
  double ref_rms = 0;
  double bound_rms = 0;  // RMS of the error as the row bound measures it (channel-whitened)
  double tolerance = 0;  // the row bound there (+Inf without one)
};

struct Metrics {
  int64_t elements = 0;
  AnomalyReport anomalies;
  int64_t compared = 0;  // elements finite in both, the ones every number below is about

  double max_abs_err = 0;
  ElementReport max_abs_at;
  double max_rel_err = 0;  // |got - ref| / |ref| over ref != 0 (dominated by refs near 0)
  ElementReport max_rel_at;
  double rel_fro_err = 0;  // ||got - ref||_F / ||ref||_F (1 for an all-zero got)
  double cosine = 1;       // of the whole tensors (1 when both are all zero)
  double ref_rms = 0;
  RowReport worst_cosine_row;
  RowReport worst_row;  // largest row error relative to its bound (or to RMS(ref) without one)
  UlpHistogram ulps;
  bool bitwise_equal = false;  // every element the same bf16 value (anomalies matched)

  bool has_bound = false;
  int64_t elements_within = 0;  // compared elements within the element bound
  int64_t rows = 0, rows_within = 0;
  double pass_pct = 0;  // elements that pass (within the bound, or the same NaN/Inf) / elements
  std::vector<ElementReport> worst;  // nonzero errors, by |err| / tolerance (|err| without a bound)

  bool pass() const;  // anomalies match and every element and row is within the bound
};

// got and ref have layout.elements() values each (std::invalid_argument otherwise). bound may be
// null (metrics only). Keeps up to worst_k worst elements.
Metrics measure(std::span<const float> got, std::span<const float> ref, const OutputLayout& layout,
                const Bound* bound, std::size_t worst_k);

}  // namespace mlacheck::check
