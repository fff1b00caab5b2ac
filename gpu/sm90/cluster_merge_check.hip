// sm_90a builds only (gpu/CMakeLists.txt): cluster_merge (gpu/sm90/cluster_merge.h) against the
// merge kernel on the same partials, for tests/gpu/cluster_merge_test.cpp. The cluster kernel is
// launched with a runtime cluster size (cudaLaunchKernelEx, cudaLaunchAttributeClusterDimension):
// block b holds split b % S of token b / S, which is its rank in its cluster of S consecutive
// blocks.
#include "gpu/sm90/cluster_merge_check.h"

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "gpu/common/args.h"
#include "gpu/common/kernels.h"
#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "gpu/sm90/cluster_merge.h"
#include "problem/shape.h"

namespace mlacheck::gpu {
namespace {

using problem::kNumHeads;
using problem::kVDim;
constexpr int kThreads = 256;
constexpr int kShared = sizeof(sm90::ClusterPartial) + sizeof(sm90::ClusterMergeScratch);

__global__ void __launch_bounds__(kThreads)
    cluster_merge_kernel(const float* part_o, const float* part_lse, int splits, bool base2,
                         uint16_t* out, float* lse) {
  extern __shared__ float4 shared_words[];
  auto& mine = *reinterpret_cast<sm90::ClusterPartial*>(shared_words);
  auto& scratch = *reinterpret_cast<sm90::ClusterMergeScratch*>(
      reinterpret_cast<unsigned char*>(shared_words) + sizeof(sm90::ClusterPartial));
  const int64_t token = blockIdx.x / splits;
  const int64_t row = static_cast<int64_t>(blockIdx.x);  // (token, split) in part_o's order
  const int tid = static_cast<int>(threadIdx.x);
  for (int i = tid; i < kNumHeads * kVDim; i += kThreads) mine.o[i] = part_o[row * kNumHeads * kVDim + i];
  if (tid < kNumHeads) mine.lse[tid] = part_lse[row * kNumHeads + tid];
  sm90::cluster_merge(mine, scratch, splits, base2, out + token * kNumHeads * kVDim,
                      lse + token * kNumHeads, kThreads);
}

MergedRows download(const DeviceBuffer<uint16_t>& out, const DeviceBuffer<float>& lse) {
  return {out.download(), lse.download()};
}

}  // namespace

MergeComparison device_merge_both_ways(const std::vector<float>& part_o,
                                       const std::vector<float>& part_lse, int tokens, int splits,
                                       bool base2) {
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

  DeviceBuffer<uint16_t> out(out_count);
  DeviceBuffer<float> lse(static_cast<std::size_t>(tokens) * kNumHeads);
  out.fill_bytes(0xFF);  // NaN
  lse.fill_bytes(0xFF);
  common::MergeArgs m;
  m.num_splits = splits;
  m.num_requests = tokens;
  m.base2 = base2;
  m.part_o = d_o.get();
  m.part_lse = d_lse.get();
  m.out = out.get();
  m.lse = lse.get();
  common::launch_merge(m, tokens, nullptr);
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  result.kernel = download(out, lse);

  out.fill_bytes(0xFF);
  lse.fill_bytes(0xFF);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(rows));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kShared;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(splits);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  MLACHECK_GPU_CHECK(cudaLaunchKernelEx(&config, cluster_merge_kernel, d_o.get(), d_lse.get(), splits,
                                        base2, out.get(), lse.get()));
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  result.cluster = download(out, lse);
  return result;
}

}  // namespace mlacheck::gpu
