// The steps of a decode that every kernel family shares: checks the params against the recipe (on
// the host, without touching device memory), carves the workspace, and queues Q quantization, the
// work list of a chunked plan, the family's attention kernel and (split-K) the merge. Plain C++,
// compiled in every build; only builds with a GPU runtime link the kernels in.
#include "gpu/common/decode_steps.h"

#include <stdexcept>
#include <string>

#include "gpu/common/args.h"
#include "gpu/common/config.h"
#include "gpu/common/kernels.h"
#include "gpu/workspace.h"
#include "problem/shape.h"
#include "quant/fp8.h"

namespace mlacheck::gpu::common {
namespace {

// The planted fault the kernels of this launch carry (gpu/mutants.h; nothing in a normal build).
template <class Args>
void stamp_mutant([[maybe_unused]] Args& args) {
#if defined(MLACHECK_MUTANTS)
  args.mutant = static_cast<int32_t>(active_mutant());
#endif
}

}  // namespace

QuantArgs quant_args_for(const problem::Recipe& r) {
  QuantArgs a;
  a.format = r.q;
  a.fp8 = r.fp8;
  a.cast_overflow = r.q_cast_overflow;
  a.rounding = r.mxfp4_rounding;
  a.recip_max = 1.0f / quant::fp8_max(r.fp8);
  if (r.q == problem::QFormat::fp8_static) {
    a.static_scale = problem::static_q_scale(r);
    a.static_inv = 1.0f / a.static_scale;
  }
  return a;
}
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("decode launch: " + what);
}

template <typename T>
T* at(const DecodeParams& p, std::size_t offset) {
  if (offset == WorkspaceLayout::kAbsent) return nullptr;
  return reinterpret_cast<T*>(static_cast<unsigned char*>(p.workspace) + offset);
}

// fl32(sm_scale) for base e, fl32(sm_scale · log2 e) for base 2 (the double product rounded once,
// as seed 000 passes SM_SCALE * LOG2E; ref/emulated_inputs.cpp does the same).
float base_score_scale(const problem::Recipe& r) {
  constexpr double kLog2e = 1.44269504088896338700e+00;  // the double nearest log2 e
  return r.base == problem::SoftmaxBase::e ? static_cast<float>(problem::kSmScale)
                                           : static_cast<float>(problem::kSmScale * kLog2e);
}

}  // namespace

void queue_decode(const problem::Recipe& r, std::size_t instance, const problem::SplitPlan& plan,
                  int64_t persistent_blocks, const DecodeParams& p, StreamHandle stream,
                  AttentionLauncher attention, MergeWeights merge_weights) {
  const int splits = plan.num_splits;
  require(splits >= 0 && splits <= kMaxSplits && plan.chunk_keys >= 0,
          "split count " + std::to_string(splits) + " outside 0.." + std::to_string(kMaxSplits) +
              ", or chunk_keys < 0");
  const bool work_list = plan.chunk_keys > 0 || plan.is_balanced();
  require(work_list == (persistent_blocks > 0),
          "a chunked or balanced split plan runs persistent blocks, a uniform one a block per split");
  require(!plan.is_balanced() || (plan.balanced_blocks == persistent_blocks && plan.unit_keys >= 1 &&
                                  plan.overhead_units >= 0 && plan.balanced_blocks <= kMaxSplits),
          "a balanced plan's blocks (" + std::to_string(plan.balanced_blocks) +
              ") must be the persistent blocks launched (" + std::to_string(persistent_blocks) +
              "), at most " + std::to_string(kMaxSplits) + ", with unit_keys >= 1 and overhead_units >= 0");
  require(p.max_kv_len >= 0, "max_kv_len < 0");
  require(r.softmax_tile >= 0, "softmax_tile < 0");
  require(p.num_requests >= 0 && p.total_q >= 0, "negative sizes");
  if (p.num_requests == 0) return;
  require(p.qo_indptr != nullptr && p.kv_indptr != nullptr && p.q != nullptr && p.out != nullptr,
          "qo_indptr, kv_indptr, q and out are required");
  require((p.kv_indices == nullptr) == (p.page_indptr == nullptr) && p.page_size >= 1,
          "kv_indices and page_indptr go together; page_size >= 1");
  switch (r.kv) {
    case problem::KvFormat::bf16:
      require(p.kv_bf16 != nullptr, "recipe reads kv_bf16");
      break;
    case problem::KvFormat::fp8:
      require(p.kv_fp8 != nullptr, "recipe reads kv_fp8");
      break;
    case problem::KvFormat::mxfp4:
      require(p.kv_mxfp4 != nullptr && p.kv_mxfp4_scale != nullptr,
              "recipe reads kv_mxfp4 and kv_mxfp4_scale");
      break;
  }
  const WorkspaceLayout w =
      workspace_layout(r, plan, p.total_q, p.num_requests, p.max_kv_len);
  require(p.workspace_bytes >= w.bytes && (w.bytes == 0 || p.workspace != nullptr),
          "workspace of " + std::to_string(p.workspace_bytes) + " bytes, needs " +
              std::to_string(w.bytes));

  QuantArgs qa = quant_args_for(r);
  qa.elements = static_cast<int64_t>(p.total_q) * problem::kNumHeads * problem::kQkDim;
  qa.q = p.q;
  qa.amax = at<uint32_t>(p, w.amax);
  qa.scale = at<float>(p, w.q_scale);
  qa.codes = at<uint8_t>(p, w.q_codes);
  qa.block_scales = at<uint8_t>(p, w.q_block_scales);
  stamp_mutant(qa);
  // Every kernel after the call's first may start while its predecessor runs (KernelStart).
  KernelStart next_start = launch_q_quant(qa, stream) ? KernelStart::with_previous : KernelStart::after_previous;

  AttentionArgs a;
  a.num_requests = p.num_requests;
  a.qo_indptr = p.qo_indptr;
  a.kv_indptr = p.kv_indptr;
  a.kv_indices = p.kv_indices;
  a.page_indptr = p.page_indptr;
  a.page_size = p.page_size;
  a.q_format = r.q;
  a.q_bf16 = p.q;
  a.q_fp8 = r.q == problem::QFormat::mxfp4_dynamic ? nullptr : qa.codes;
  a.q_mxfp4 = r.q == problem::QFormat::mxfp4_dynamic ? qa.codes : nullptr;
  a.q_mxfp4_scale = qa.block_scales;
  a.q_scale = qa.scale;  // present exactly for the scaled fp8 formats (workspace_layout)
  a.cache_rows = p.cache_rows;
  a.kv_bf16 = p.kv_bf16;
  a.kv_fp8 = p.kv_fp8;
  a.kv_mxfp4 = p.kv_mxfp4;
  a.kv_mxfp4_scale = p.kv_mxfp4_scale;
  a.kv_scaled = r.kv == problem::KvFormat::fp8;
  a.kv_scale = p.kv_fp8_scale;
  a.fp8 = r.fp8;
  a.score_scale = base_score_scale(r);
  a.softmax_tile = r.softmax_tile;
  a.partial = r.partial;
  a.num_splits = splits;
  a.out = p.out;
  a.lse = p.lse;
  a.part_o = at<float>(p, w.part_o);
  a.part_lse = at<float>(p, w.part_lse);
  require(!p.reuse_plan || !work_list || plan.is_balanced(),
          "reuse_plan: a chunked plan's work list is consumed by its call (the item counter), only a "
          "balanced plan's can be reused");
  const TokenRows* token_rows = nullptr;  // the merge's lookup (work-list plans)
  if (work_list) {
    PlanArgs pa;
    pa.num_requests = p.num_requests;
    pa.chunk_keys = plan.chunk_keys;
    pa.balanced_blocks = plan.balanced_blocks;
    pa.unit_keys = plan.unit_keys;
    pa.overhead_units = plan.overhead_units;
    pa.block_head = at<ResolvedItem>(p, w.block_head);
    pa.item_resolved = at<ResolvedItem>(p, w.item_resolved);
    pa.qo_indptr = p.qo_indptr;
    pa.kv_indptr = p.kv_indptr;
    pa.item_start = at<int32_t>(p, w.item_start);
    pa.part_start = at<int64_t>(p, w.part_start);
    pa.item_counter = at<int32_t>(p, w.item_counter);
    pa.token_rows = at<TokenRows>(p, w.token_rows);
    stamp_mutant(pa);
    if (!p.reuse_plan) {
      launch_work_list(pa, stream, next_start);
      next_start = KernelStart::with_previous;
    }
    a.item_start = pa.item_start;
    a.part_start = pa.part_start;
    a.item_counter = pa.item_counter;
    token_rows = pa.token_rows;
    a.block_head = pa.block_head;
    a.item_resolved = pa.item_resolved;
    a.plan_made_before = p.reuse_plan;
    a.unsplit_direct = plan.is_balanced() && !p.keep_partials;
  }
  stamp_mutant(a);
  const bool merged = attention(instance, a,
                                work_list
                                    ? persistent_blocks
                                    : static_cast<int64_t>(p.num_requests) * (splits > 0 ? splits : 1),
                                stream, next_start);

  if (plan.split_k() && !merged) {
    MergeArgs m;
    m.weights = merge_weights;
    m.num_splits = splits;
    m.token_rows = token_rows;
    m.unsplit_written = a.unsplit_direct;
    m.base2 = r.base == problem::SoftmaxBase::two;
    m.part_o = a.part_o;
    m.part_lse = a.part_lse;
    m.out = p.out;
    m.lse = p.lse;
    stamp_mutant(m);
    launch_merge(m, p.total_q, plan.most_splits(p.max_kv_len, p.total_kv, p.num_requests), stream,
                 KernelStart::with_previous);
  }
}

}  // namespace mlacheck::gpu::common
