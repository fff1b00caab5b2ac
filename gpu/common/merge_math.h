#pragma once
// The split-K LSE merge's float operations (ref/decode_emulated.h step 5), in one place for every
// merge on the device: the merge kernel (gpu/common/merge.hip) and the Hopper family's merge inside
// a cluster (gpu/sm90/cluster_merge.h), so that both give the same bits. weight and merged_lse here
// are the emulation's (its bits); a family may take the vendor's float32 functions for those two
// instead (gpu/common/merge_weights.h), the rest staying these operations. Per (query row, head),
// splits in order, float32: M = max lse (a NaN is skipped, as std::max), w_s = b^(lse_s - M),
// W = Σ w_s, out = bf16(fl32(Σ w_s·o_s) / W) (each product rounded, then added), lse = fl32(M +
// log_b W) in the natural log. A row with no visible key in any split (M = -inf) gets out = 0 and
// lse = -inf; an empty split (lse -inf) weighs 0. Device code; callers compile without FMA
// contraction (device_math.h).
#include "gpu/common/device_math.h"

namespace mlacheck::gpu::common::merge {

inline constexpr float kNegInf = -__builtin_huge_valf();

// The running maximum in split order: max_lse(max_lse(-inf, lse_0), lse_1) ...
MLACHECK_HD inline float max_lse(float big, float lse) { return big < lse ? lse : big; }

// A row whose every split is empty.
MLACHECK_HD inline bool empty_row(float big) { return big == kNegInf; }

// w_s for a split's lse against the row's maximum (0 for an empty split, and for every split of an
// empty row).
MLACHECK_HD inline float weight(bool base2, float lse, float big) {
  return empty_row(big) ? 0.0f : exp_base(base2, lse - big);
}

// The merged LSE (natural log) from the maximum and W = Σ w_s.
MLACHECK_HD inline float merged_lse(bool base2, float big, float total) {
  return empty_row(big) ? kNegInf : natural_lse(base2, big + log_base(base2, total));
}

// acc + w·o, the product rounded before the sum.
MLACHECK_HD inline float accumulate(float acc, float w, float o) {
  const float p = w * o;
  return acc + p;
}

}  // namespace mlacheck::gpu::common::merge
