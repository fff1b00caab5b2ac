// The merge kernel on given partials, for the tests (gpu/common/merge_check.h).
#include "gpu/common/merge_check.h"

#include <stdexcept>
#include <string>

#include "gpu/common/args.h"
#include "gpu/common/config.h"
#include "gpu/common/kernels.h"
#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "problem/shape.h"

namespace mlacheck::gpu {

MergedRows device_merge_kernel(const std::vector<float>& part_o, const std::vector<float>& part_lse, int tokens,
                               int splits, bool base2, common::MergeWeights weights) {
  using problem::kNumHeads;
  using problem::kVDim;
  if (splits < 1 || splits > common::kMaxSplits || tokens < 1)
    throw std::invalid_argument("device_merge_kernel: splits " + std::to_string(splits) + " outside 1.." +
                                std::to_string(common::kMaxSplits) + ", or no token");
  const auto rows = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(splits);
  if (part_o.size() != rows * kNumHeads * kVDim || part_lse.size() != rows * kNumHeads)
    throw std::invalid_argument("device_merge_kernel: partials of the wrong size");
  const DeviceBuffer<float> d_o(part_o), d_lse(part_lse);
  DeviceBuffer<uint16_t> out(static_cast<std::size_t>(tokens) * kNumHeads * kVDim);
  DeviceBuffer<float> lse(static_cast<std::size_t>(tokens) * kNumHeads);
  out.fill_bytes(0xFF);  // NaN
  lse.fill_bytes(0xFF);
  common::MergeArgs m;
  m.weights = weights;
  m.num_splits = splits;
  m.base2 = base2;
  m.part_o = d_o.get();
  m.part_lse = d_lse.get();
  m.out = out.get();
  m.lse = lse.get();
  common::launch_merge(m, tokens, splits, nullptr, common::KernelStart::after_previous);
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return {out.download(), lse.download()};
}

}  // namespace mlacheck::gpu
