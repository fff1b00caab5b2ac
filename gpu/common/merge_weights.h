#pragma once
// The split-K merge's weights w_s = b^(lse_s - M) and merged LSE M + log_b W as a family asks
// (MergeWeights, gpu/common/args.h): by the emulation's double-precision functions
// (merge_math.h: the emulation's bits) or by the vendor's float32 ones (vendor_math.h). The rest of
// the merge (the maximum, W in split order, the products, the quotient) is merge_math.h's either
// way. Device code only: the merge kernel (gpu/common/merge.hip) and the merge in the hopper
// kernel's clusters (gpu/sm90/cluster_merge.h).
#include "gpu/common/args.h"
#include "gpu/common/merge_math.h"
#include "gpu/common/vendor_math.h"

namespace mlacheck::gpu::common::merge {

template <MergeWeights W>
__device__ __forceinline__ float weight_by(bool base2, float lse, float big) {
  if constexpr (W == MergeWeights::emulated) {
    return weight(base2, lse, big);
  } else {
    if (empty_row(big)) return 0.0f;
    return base2 ? vendor_exp<true>(lse - big) : vendor_exp<false>(lse - big);
  }
}

// The merged LSE in the natural log. The vendor's base-2 LSE is converted by a float32 product with
// fl32(ln 2) (one more rounding than the emulation's double product: within the LSE tolerance,
// check/lse.h, by far).
template <MergeWeights W>
__device__ __forceinline__ float merged_lse_by(bool base2, float big, float total) {
  if constexpr (W == MergeWeights::emulated) {
    return merged_lse(base2, big, total);
  } else {
    if (empty_row(big)) return kNegInf;
    return base2 ? (big + vendor_log<true>(total)) * static_cast<float>(math_detail::kLn2)
                 : big + vendor_log<false>(total);
  }
}

}  // namespace mlacheck::gpu::common::merge
