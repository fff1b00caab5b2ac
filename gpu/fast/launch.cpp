// The launcher of the fast strategies: the fast kernel's own requirements (its softmax step, the
// copy engine's 16-byte alignment), then the shared steps of portable::launch_with. Plain C++,
// compiled in every build; only builds with a GPU runtime link it in (gpu/registry.cpp).
#include "gpu/fast/launch.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/fast/config.h"
#include "gpu/fast/kernels.h"
#include "gpu/fast/split_rule.h"
#include "gpu/portable/launch.h"

namespace mlacheck::gpu::fast {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("fast decode launch: " + what);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void launch(const problem::Recipe& r, Schedule schedule, const Tunables& tunables,
            const DecodeParams& p, StreamHandle stream) {
  require(r.softmax_tile == kTileKeys,
          "the kernel's softmax step is its tile of " + std::to_string(kTileKeys) +
              " keys; recipe " + std::string(r.name) + " asks for " +
              std::to_string(r.softmax_tile));
  require(q_fits_operands(r), "fp8 KV x fp8 P runs on f16 operands, which needs an fp8 Q");
  require(schedule != Schedule::single_pass,
          "the fast kernels run split-K or persistent (one split is a single pass)");
  require(p.max_kv_len >= 0, "max_kv_len < 0");
  // 16-byte copies: every cache row starts 16-byte aligned when the base is (rows are 1152, 576 and
  // 288 bytes).
  require(aligned16(p.kv_bf16) && aligned16(p.kv_fp8) && aligned16(p.kv_mxfp4),
          "the KV cache must be 16-byte aligned");
  require(p.total_kv >= 0, "total_kv < 0");
  const problem::SplitPlan plan =
      split_plan(schedule, tunables, p.num_requests, p.max_kv_len, p.total_kv);
  // Persistent: one block per SM (the shared-memory plan allows one), each taking items in turn.
  portable::launch_with(r, plan, plan.chunk_keys > 0 ? kMultiprocessors : 0, p, stream,
                        &launch_attention);
}

}  // namespace mlacheck::gpu::fast
