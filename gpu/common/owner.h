#pragma once
// Which range of a prefix-sum array a position falls in: the last i in [0, count) with
// starts[i] <= value, for nondecreasing starts with starts[0] <= value. Ranges may be empty (equal
// neighbours); the last of equals is the one that owns the position. Used for a token's request
// (qo_indptr) and a work item's request (item_start). Host + device; tests/gpu/owner_test.cpp.
#include <cstdint>

#include "quant/hd.h"

namespace mlacheck::gpu::common {

MLACHECK_HD inline int owner_of(const int32_t* starts, int count, int64_t value) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (starts[mid] <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace mlacheck::gpu::common
