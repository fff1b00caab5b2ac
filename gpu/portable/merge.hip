// The split-K LSE merge (ref/decode_emulated.h step 5), one block per query row, float32, splits in
// order: M = max lse, w_s = b^(lse_s - M), W = Σ w_s, out = bf16(fl32(Σ w_s·o_s) / W),
// lse = fl32(M + log_b W). A row with no visible key in any split gets out = 0, lse = -inf.
#include <cstdint>
#include <limits>

#include "gpu/platform.h"
#include "gpu/portable/config.h"
#include "gpu/portable/device_common.h"
#include "gpu/portable/device_math.h"
#include "gpu/portable/kernels.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::gpu::portable {
namespace {

using problem::kNumHeads;
using problem::kVDim;

constexpr int kThreadsPerHead = kMergeThreads / kNumHeads;      // 16
constexpr int kPairsPerThread = kVDim / 2 / kThreadsPerHead;    // 16 pairs = 32 dims
static_assert(kThreadsPerHead * kNumHeads == kMergeThreads);
static_assert(kPairsPerThread * kThreadsPerHead * 2 == kVDim);

__global__ void __launch_bounds__(kMergeThreads) merge_kernel(MergeArgs a) {
  constexpr float kNegInf = -__builtin_huge_valf();
  __shared__ float weight[kMaxSplits][kNumHeads];
  __shared__ float total[kNumHeads];
  __shared__ bool empty[kNumHeads];

  const int tid = static_cast<int>(threadIdx.x);
  const int64_t token = blockIdx.x;
  const int splits = a.num_splits;
  if (tid < kNumHeads) {  // weights of head tid, in split order
    const float* lse = a.part_lse + token * splits * kNumHeads + tid;
    float big = kNegInf;
    for (int s = 0; s < splits; ++s) big = big < lse[s * kNumHeads] ? lse[s * kNumHeads] : big;
    empty[tid] = big == kNegInf;
    float sum = 0.0f;
    if (big != kNegInf) {
      for (int s = 0; s < splits; ++s) {
        const float w = exp_base(a.base2, lse[s * kNumHeads] - big);  // empty split: 0
        weight[s][tid] = w;
        sum = sum + w;
      }
    }
    total[tid] = sum;
    if (a.lse != nullptr)
      a.lse[token * kNumHeads + tid] =
          big == kNegInf ? kNegInf : natural_lse(a.base2, big + log_base(a.base2, sum));
  }
  block_sync();

  const int head = tid / kThreadsPerHead;
  const int lane = tid % kThreadsPerHead;
  uint32_t* out = reinterpret_cast<uint32_t*>(a.out + (token * kNumHeads + head) * kVDim);
  for (int jj = 0; jj < kPairsPerThread; ++jj) {
    const int pair = lane + kThreadsPerHead * jj;
    float even = 0.0f, odd = 0.0f;
    if (!empty[head]) {
      for (int s = 0; s < splits; ++s) {
        const float w = weight[s][head];
        const float* o = a.part_o + ((token * splits + s) * kNumHeads + head) * kVDim + 2 * pair;
        const float we = w * o[0];  // product then sum: one rounding each, as the reference
        const float wo = w * o[1];
        even = even + we;
        odd = odd + wo;
      }
      even = even / total[head];
      odd = odd / total[head];
    }
    out[pair] = pack_bf16(quant::f32_to_bf16(even), quant::f32_to_bf16(odd));
  }
}

}  // namespace

void launch_merge(const MergeArgs& args, int64_t rows, StreamHandle stream) {
  if (rows == 0) return;
  merge_kernel<<<static_cast<unsigned>(rows), kMergeThreads, 0, static_cast<hipStream_t>(stream)>>>(
      args);
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace mlacheck::gpu::portable
