#pragma once
// Runtime builds only (MLACHECK_HAVE_GPU_RUNTIME): one decode problem on the device, built so that
// a read outside what the batch uses shows in the output (STYLE.md "Data that makes bugs
// visible"):
//   - cache rows no request reads, and kPadRows rows past the end, hold NaN codes (bf16 0xFFFF,
//     fp8 NaN, MXFP4 scale 0xFF), so a wrong row turns a score into NaN;
//   - the page table has kPadSlots extra slots holding a huge page index (INT32_MAX), so a read
//     past a request's pages points far outside the cache;
//   - q has one extra NaN row; outputs and workspace are filled with 0xFF bytes (NaN) before each
//     run, so an element the kernels never write cannot pass.
// The host caches are quantized from the real rows only (the fp8 per-tensor scale sees no NaN);
// only these device copies are poisoned.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gpu/params.h"
#include "gpu/registry.h"
#include "problem/batch.h"
#include "problem/kv_cache.h"

namespace mlacheck::gpu {

struct RunResult {
  std::vector<uint16_t> out;  // [T, 16, 512] bf16 bits
  std::vector<float> lse;     // [T, 16] natural log
  float milliseconds = 0;     // GPU time of the launch (events around it)
  // KeepWorkspace::yes: the workspace as the launch left it (gpu/workspace.h's regions: quantized
  // Q, split partials, work list), for `mlacheck drift --strategy`.
  std::vector<unsigned char> workspace;
};

enum class KeepWorkspace : bool { no, yes };

class DeviceProblem {
 public:
  static constexpr int64_t kPadRows = 64;
  static constexpr std::size_t kPadSlots = 64;

  // Uploads the batch layout and q ([T, 16, 576] bf16 bits). The batch must outlive this object.
  DeviceProblem(const problem::Batch& batch, std::span<const uint16_t> q_bf16);
  ~DeviceProblem();
  DeviceProblem(const DeviceProblem&) = delete;
  DeviceProblem& operator=(const DeviceProblem&) = delete;

  // DecodeParams for strategy s on `cache` (uploaded, poisoned, on first use; keyed by its host
  // data): device caches, outputs and a workspace large enough for s. The pointers stay valid
  // while this object lives (a later call may reallocate the workspace).
  DecodeParams params(const Strategy& s, const problem::KvCache& cache);
  // Poisons outputs and workspace, runs s once on this object's stream, waits, downloads.
  RunResult run(const Strategy& s, const problem::KvCache& cache,
                KeepWorkspace keep = KeepWorkspace::no);

  StreamHandle stream() const;
  const problem::Batch& batch() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlacheck::gpu
