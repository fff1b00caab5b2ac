// The launcher of the mma strategies: the fast kernel's own requirements (its softmax step, the
// copy engine's 16-byte alignment), then the shared steps of common::queue_decode. Plain C++,
// compiled in every build; only builds with a GPU runtime link it in (gpu/fast/family.cpp).
#include "gpu/fast/launch.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/common/decode_steps.h"
#include "gpu/fast/config.h"
#include "gpu/fast/family.h"
#include "gpu/fast/instances.h"
#include "gpu/fast/kernels.h"

namespace mlacheck::gpu::fast {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("fast decode launch: " + what);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void launch(const Strategy& s, const DecodeParams& p, StreamHandle stream) {
  const problem::Recipe& r = s.recipe;
  require(r.softmax_tile == kTileKeys,
          "the kernel's softmax step is its tile of " + std::to_string(kTileKeys) +
              " keys; recipe " + std::string(r.name) + " asks for " +
              std::to_string(r.softmax_tile));
  require(q_fits_operands(r), "fp8 KV x fp8 P runs on f16 operands, which needs an fp8 Q");
  require(s.schedule != Schedule::single_pass,
          "the fast kernels run split-K or persistent (one split is a single pass)");
  const auto instance = find_instance(r);
  require(instance.has_value(), "no kernel instance for recipe " + std::string(r.name));
  require(p.max_kv_len >= 0 && p.total_kv >= 0, "max_kv_len or total_kv < 0");
  require(p.multiprocessors >= 1, "multiprocessors (the device's SM count) must be set");
  // 16-byte copies: every cache row starts 16-byte aligned when the base is (rows are 1152, 576 and
  // 288 bytes).
  require(aligned16(p.kv_bf16) && aligned16(p.kv_fp8) && aligned16(p.kv_mxfp4),
          "the KV cache must be 16-byte aligned");
  const problem::SplitPlan plan =
      family().split_plan(s, {p.num_requests, p.max_kv_len, p.total_kv}, p.multiprocessors);
  // The fast kernel takes items of chunked plans only (gpu/fast/attention.hip's work item).
  require(!plan.is_balanced(), "the fast kernels run uniform or chunked split plans, not balanced ones");
  // Persistent: one block per SM (the shared-memory plan allows one), each taking items in turn.
  common::queue_decode(r, *instance, plan, plan.chunk_keys > 0 ? p.multiprocessors : 0, p, stream,
                       &launch_attention, family().merge_weights);
}

}  // namespace mlacheck::gpu::fast
