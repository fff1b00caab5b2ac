// The launcher of the Hopper strategies: the kernel's own requirements, then the shared steps of
// common::queue_decode. Plain C++, compiled in every build; only NVIDIA builds link it in
// (gpu/hopper/family.cpp).
#include "gpu/hopper/launch.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/common/decode_steps.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/family.h"
#include "gpu/hopper/instances.h"
#include "gpu/hopper/kernels.h"
#include "gpu/hopper/merge_choice.h"
#include "problem/shape.h"

namespace mlacheck::gpu::hopper {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("hopper decode launch: " + what);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void launch(const Strategy& s, const DecodeParams& p, StreamHandle stream) {
  const problem::Recipe& r = s.recipe;
  require(r.softmax_tile == kTileKeys, "the kernel's softmax step is its tile of " +
                                           std::to_string(kTileKeys) + " keys");
  require(reads_q(r.p, r.q), "the kernel reads a bf16 Q with bf16 P, MXFP4 codes with f16 P, fp8 codes with fp8 P");
  // MXFP4 and fp8 Q: the token's codes (and scales) by 16-byte asynchronous copies from the
  // workspace (whose regions are aligned to WorkspaceLayout::kAlignment from its base); the work
  // list's 16-byte records (common::TokenRows, common::ResolvedItem) by 16-byte loads.
  require(aligned16(p.workspace), "the workspace must be 16-byte aligned");
  // The fp8 and MXFP4 kernels store the output and the split partials (in the workspace) as 16-byte
  // rows (attention.hip's epilogue).
  require(r.kv == problem::KvFormat::bf16 || (aligned16(p.out) && aligned16(p.workspace)),
          "the output and the workspace must be 16-byte aligned");
  require(s.schedule != Schedule::single_pass,
          "the kernel runs split-K or persistent (one split is a single pass)");
  const auto instance = find_instance(r);
  require(instance.has_value(), "no kernel instance for recipe " + std::string(r.name));
  require(p.multiprocessors >= 1, "multiprocessors (the device's SM count) must be set");
  require(p.max_kv_len >= 0 && p.total_kv >= 0, "max_kv_len or total_kv < 0");
  // 16-byte copies of Q; the bulk tensor copies' map of a bf16 cache and the bulk copies of an fp8
  // one (16-byte aligned base; row coordinates of 32 bits).
  require(aligned16(p.q) && (r.kv == problem::KvFormat::mxfp4 ||
                             aligned16(r.kv == problem::KvFormat::fp8 ? static_cast<const void*>(p.kv_fp8)
                                                                      : static_cast<const void*>(p.kv_bf16))),
          "Q and the KV cache must be 16-byte aligned");
  require(p.cache_rows > 0 || p.total_kv == 0, "cache_rows (the cache's row count) must be set");
  require(p.cache_rows < (int64_t{1} << 31), "the cache must have fewer than 2^31 rows");
  if (r.kv == problem::KvFormat::mxfp4) {
    // Bulk copies of the 288-byte code rows; the scales' 1-D tensor map (16-byte aligned base, byte
    // coordinates of 32 bits).
    require(aligned16(p.kv_mxfp4) && aligned16(p.kv_mxfp4_scale),
            "the MXFP4 codes and block scales must be 16-byte aligned");
    require(p.cache_rows * problem::kMxfp4RowScales < (int64_t{1} << 31),
            "an MXFP4 cache's block scales must be fewer than 2^31 bytes");
  }
  const problem::SplitPlan plan =
      family().split_plan(s, {p.num_requests, p.max_kv_len, p.total_kv}, p.multiprocessors);
  // Split-K of 2 to 8 splits: the merge in the kernel's clusters (the partials read back from L2
  // by the cluster's blocks, no merge kernel) when every request's cluster runs at once, unless the
  // caller reads the partials back. A cluster must find its blocks' SMs free in one GPC, so fewer
  // clusters fit than SMs / splits: device run 3 of 2026-12-02 session 5 ran 32 x 1024 with 4
  // splits fused in 43 µs against 25 unfused (a second wave), and 64 x 8192 with 2 splits in 153.0
  // against 156.4; with the merge from L2 (device run 7 of 2026-12-03), 4 x 1024 with 8 splits
  // fused 16.8 against 23.7 for the merge kernel (16-block clusters: gpu/sm90/cluster_merge.h).
  // Persistent: one block per SM (the shared-memory plan allows one), each taking items in turn.
  // Where the partials merge: gpu/hopper/merge_choice.h (the family's rule, or bench --merge's).
  const bool fused =
      merges_in_clusters(s.tunables.cluster_merge, r.kv, plan.num_splits, p.num_requests, p.keep_partials,
                         [&] { return cluster_merge_capacity(*instance, plan.num_splits); });
  const bool persistent = plan.chunk_keys > 0 || plan.is_balanced();
  // Query tokens of a request taken together (bf16): where some request has q_len > 1 (more query
  // rows than requests), unless the strategy asks for one at a time.
  const bool packed = r.kv == problem::KvFormat::bf16 && p.total_q > p.num_requests && s.tunables.pack_tokens;
  const common::AttentionLauncher attention =
      packed ? (fused ? &launch_attention_fused_packed : &launch_attention_packed)
             : (fused ? &launch_attention_fused : &launch_attention);
  common::queue_decode(r, *instance, plan, persistent ? p.multiprocessors : 0, p, stream, attention,
                       family().merge_weights);
}

}  // namespace mlacheck::gpu::hopper
