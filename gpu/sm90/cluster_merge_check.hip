// sm_90a builds only (gpu/CMakeLists.txt): cluster_merge_rows (gpu/sm90/cluster_merge.h) against
// the merge kernel on the same partials, for tests/gpu/cluster_merge_test.cpp: S blocks per token,
// block b merging rank b % S's share of token b / S.
#include "gpu/sm90/cluster_merge_check.h"

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "gpu/sm90/cluster_merge.h"
#include "problem/shape.h"

namespace mlacheck::gpu {
namespace {

using problem::kNumHeads;
using problem::kVDim;
constexpr int kThreads = 256;
constexpr int kShared = sizeof(sm90::ClusterMergeScratch);

// Block b merges its share (rank b % S) of token b / S's rows, as the hopper kernel's blocks do
// once every split's row is written (here the rows are the input).
template <common::MergeWeights Weights>
__global__ void __launch_bounds__(kThreads)
    cluster_merge_kernel(const float* part_o, const float* part_lse, int splits, bool base2,
                         uint16_t* out, float* lse) {
  extern __shared__ float4 shared_words[];
  auto& scratch = *reinterpret_cast<sm90::ClusterMergeScratch*>(shared_words);
  const int64_t token = blockIdx.x / splits;
  const auto rank = static_cast<int>(blockIdx.x % splits);
  sm90::cluster_merge_rows<Weights>(part_o + token * splits * kNumHeads * kVDim, part_lse + token * splits * kNumHeads,
                           splits, rank, base2, out + token * kNumHeads * kVDim, lse + token * kNumHeads,
                           scratch, kThreads, [] { common::block_sync(); });
}

MergedRows download(const DeviceBuffer<uint16_t>& out, const DeviceBuffer<float>& lse) {
  return {out.download(), lse.download()};
}

}  // namespace

MergeComparison device_merge_both_ways(const std::vector<float>& part_o,
                                       const std::vector<float>& part_lse, int tokens, int splits,
                                       bool base2, common::MergeWeights weights) {
  if (splits < 1 || splits > sm90::kMaxClusterSplits || tokens < 1)
    throw std::invalid_argument("device_merge_both_ways: splits " + std::to_string(splits) +
                                " outside 1.." + std::to_string(sm90::kMaxClusterSplits) +
                                ", or no token");
  const auto rows = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(splits);
  if (part_o.size() != rows * kNumHeads * kVDim || part_lse.size() != rows * kNumHeads)
    throw std::invalid_argument("device_merge_both_ways: partials of the wrong size");
  const DeviceBuffer<float> d_o(part_o), d_lse(part_lse);
  const std::size_t out_count = static_cast<std::size_t>(tokens) * kNumHeads * kVDim;

  MergeComparison result;
  result.kernel = device_merge_kernel(part_o, part_lse, tokens, splits, base2, weights);

  DeviceBuffer<uint16_t> out(out_count);
  DeviceBuffer<float> lse(static_cast<std::size_t>(tokens) * kNumHeads);
  out.fill_bytes(0xFF);
  lse.fill_bytes(0xFF);
  // S blocks per token, block b of rank b % S: the hopper kernel's clusters, whose only part in
  // the merge is the barrier before it (here the rows are the input).
  const auto kernel = weights == common::MergeWeights::vendor ? cluster_merge_kernel<common::MergeWeights::vendor>
                                                              : cluster_merge_kernel<common::MergeWeights::emulated>;
  kernel<<<static_cast<unsigned>(rows), kThreads, kShared>>>(d_o.get(), d_lse.get(), splits, base2, out.get(), lse.get());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  result.cluster = download(out, lse);
  return result;
}

}  // namespace mlacheck::gpu
