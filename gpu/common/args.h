#pragma once
// The arguments of every family's kernels, as the shared decode steps (gpu/common/decode_steps.cpp)
// derive them from a recipe and DecodeParams. Plain structs passed by value to the kernels.
#include <cstdint>

#include "gpu/mutants.h"
#include "problem/recipe.h"
#include "quant/formats.h"

namespace mlacheck::gpu::common {

// A query row's partial rows under a work-list plan: first .. first + splits - 1. Written by the plan
// kernel so that the merge reads its rows with one 16-byte load; looking up the row's request and
// then that request's item_start, part_start and qo_indptr was two dependent round trips to memory
// before the first partial could be loaded.
struct alignas(16) TokenRows {
  int64_t first = 0;
  int32_t splits = 0;
  int32_t unused = 0;
};

// A balanced plan's work item, resolved by the plan kernel (work_list.hip), so that the persistent
// attention kernel takes any item with one load instead of the work list's chain of three (the
// block's first item, the item's request, that request's starts): a persistent block's first box
// of the cache landed 10.4 k cycles after its entry against a split-K block's 6.1 k (H200, `bench
// --stamps`, device call 4 of 2026-12-06's sixteenth session). Keys are the request's (first ..
// end - 1); rows of the cache from row0, query rows from q_row0. block: the block that runs it (-1
// past the last item); splits = 0: no item (a block without items, in block_head).
struct alignas(16) ResolvedItem {
  int32_t request = 0, split = 0, splits = 0, row0 = 0;
  int32_t len = 0, q_len = 0, first = 0, end = 0;
  int64_t part_base = 0;  // the request's first partial row (part_start)
  int32_t q_row0 = 0;
  int32_t item = 0;  // its index in the work list
  int32_t block = -1;
  int32_t unused = 0;
};

// Q quantization (gpu/common/q_quant.hip).
struct QuantArgs {
  problem::QFormat format = problem::QFormat::bf16;
  quant::Fp8Format fp8 = quant::Fp8Format::e4m3fn;
  quant::Overflow cast_overflow = quant::Overflow::saturate;  // fp8_cast
  quant::E2M1Rounding rounding = quant::E2M1Rounding::rne;    // mxfp4_dynamic
  float recip_max = 0;       // fl32(1 / fp8 max), the harness's and aiter's fl32(1/M)
  float static_scale = 0;    // fp8_static: the fixed scale
  float static_inv = 0;      // fp8_static: fl32(1 / static_scale)
  int64_t elements = 0;      // T * 16 * 576
  const uint16_t* q = nullptr;      // [T, 16, 576] bf16
  uint32_t* amax = nullptr;         // [kAmaxBlocks] partial maxima (harness, dynamic)
  float* scale = nullptr;           // [1] the per-tensor scale written (harness, dynamic, static)
  uint8_t* codes = nullptr;         // [T, 16, 576] fp8 codes, or [T, 16, 288] E2M1 pairs
  uint8_t* block_scales = nullptr;  // [T, 16, 18] E8M0 (mxfp4)
  bool vector = false;              // fp8: Q and the codes read and written 8 elements at a time (set by launch_q_quant)
  MLACHECK_MUTANT_FIELD
};

// The recipe-derived fields of QuantArgs (format, variant, rounding, fl32(1/M), static scale);

// The attention kernel (gpu/portable/attention.hip): one block per (request, split).
struct AttentionArgs {
  // Batch layout (gpu/params.h).
  int32_t num_requests = 0;
  const int32_t* qo_indptr = nullptr;    // [B+1]
  const int32_t* kv_indptr = nullptr;    // [B+1]
  const int32_t* kv_indices = nullptr;   // [P] or nullptr
  const int64_t* page_indptr = nullptr;  // [B+1] or nullptr
  int32_t page_size = 1;
  // Q as Q·Kᵀ takes it: bf16, or the codes the quantization wrote.
  problem::QFormat q_format = problem::QFormat::bf16;
  const uint16_t* q_bf16 = nullptr;        // [T, 16, 576]            (bf16)
  const uint8_t* q_fp8 = nullptr;          // [T, 16, 576] codes      (fp8 formats)
  const uint8_t* q_mxfp4 = nullptr;        // [T, 16, 288] E2M1 pairs (mxfp4)
  const uint8_t* q_mxfp4_scale = nullptr;  // [T, 16, 18] E8M0        (mxfp4)
  const float* q_scale = nullptr;          // [1] per-tensor Q scale; nullptr: unscaled
  // KV cache in the instance's format.
  int64_t cache_rows = 0;                   // N (the bulk tensor copies' map: rows past N land as 0)
  const uint16_t* kv_bf16 = nullptr;        // [N, 576]
  const uint8_t* kv_fp8 = nullptr;          // [N, 576]
  const uint8_t* kv_mxfp4 = nullptr;        // [N, 288]
  const uint8_t* kv_mxfp4_scale = nullptr;  // [N, 18]
  bool kv_scaled = false;                   // fp8: scores and outputs carry kv_scale
  float kv_scale = 1.0f;
  // Numerics of the recipe that are not template arguments.
  quant::Fp8Format fp8 = quant::Fp8Format::e4m3fn;  // of fp8 Q, KV and P
  float score_scale = 0;  // fl32(sm_scale), or fl32(sm_scale · log2 e) for base 2
  int softmax_tile = 0;   // keys per softmax step; 0 = the whole split
  problem::PartialFormat partial = problem::PartialFormat::f32;
  // Schedule: 0 = single pass (writes out, lse); n >= 1 = split-K (writes part_o, part_lse), one
  // block per (request, split).
  int num_splits = 0;
  // Chunked split plans (problem/split_plan.h; the fast kernel's persistent schedule): when set,
  // num_splits is unused, request b has S_b = item_start[b+1] - item_start[b] splits and its
  // partial rows start at part_start[b] (token i, split s: row part_start[b] + i·S_b + s); each
  // block takes the next of the item_start[B] work items from item_counter until none is left
  // (dynamic, so items of unequal size still balance across the SMs).
  const int32_t* item_start = nullptr;  // [B+1] (work_list.hip writes it)
  const int64_t* part_start = nullptr;  // [B+1]
  int32_t* item_counter = nullptr;      // [1], 0 on entry (work_list.hip resets it)
  // Balanced plans (problem/split_plan.h; set with item_start): block i takes its first item from
  // block_head[i], then item_resolved[block_head[i].item + 1], ... in order (no counter) while their
  // block is i. unsplit_direct: a request of one split is not split, its block writes out and lse (no
  // partial; off when the caller reads the partials back, DecodeParams::keep_partials).
  const ResolvedItem* block_head = nullptr;     // [blocks]: each block's first item, resolved
  const ResolvedItem* item_resolved = nullptr;  // [items + 1]: every item, then one of block -1
  bool unsplit_direct = false;
  // The work list was made by an earlier call (DecodeParams::reuse_plan): no kernel of this call
  // writes what the attention kernel's producer reads, so it need not wait for its predecessor.
  bool plan_made_before = false;
  uint16_t* out = nullptr;   // [T, 16, 512] bf16 (single pass)
  float* lse = nullptr;      // [T, 16] natural log (single pass); may be nullptr
  float* part_o = nullptr;   // [T, S, 16, 512] (split-K)
  float* part_lse = nullptr; // [T, S, 16] base-b LSE (split-K)
  MLACHECK_MUTANT_FIELD
};

// The work list of a chunked split plan (gpu/common/work_list.hip), from the batch layout on
// the device: no host synchronization.
struct PlanArgs {
  int32_t num_requests = 0;
  int32_t chunk_keys = 0;
  // Balanced plans (problem/split_plan.h) when balanced_blocks > 0; chunk_keys is then unused.
  int32_t balanced_blocks = 0;
  int32_t unit_keys = 0;
  int32_t overhead_units = 0;
  ResolvedItem* block_head = nullptr;     // [blocks] out (balanced)
  ResolvedItem* item_resolved = nullptr;  // [B + blocks] out (balanced): every item, then block -1
  const int32_t* qo_indptr = nullptr;  // [B+1]
  const int32_t* kv_indptr = nullptr;  // [B+1]
  int32_t* item_start = nullptr;       // [B+1] out: Σ_{b' < b} S_b'
  int64_t* part_start = nullptr;       // [B+1] out: Σ_{b' < b} q_len_b' · S_b'
  int32_t* item_counter = nullptr;     // [1] out: 0, the attention kernel's next work item
  TokenRows* token_rows = nullptr;     // [T] out: each query row's partial rows (the merge's lookup)
  MLACHECK_MUTANT_FIELD
};

// How a split-K merge computes its weights w_s = b^(lse_s - M) and the merged LSE M + log_b W
// (gpu/common/merge_math.h): a family's choice, which its launcher passes to queue_decode.
enum class MergeWeights : uint8_t {
  // fl32 of double-precision exp and log (device_math.h): the emulation's bits (ref step 5), as the
  // portable reference kernels' softmax; the portable and mma families.
  emulated,
  // The vendor's float32 exp and log (vendor_math.h), within the kernel bound as the softmax's exp
  // is: the hopper family (gpu/hopper/config.h kMergeWeights says why).
  vendor,
};

// The LSE merge (gpu/common/merge.hip): one block per (query row, head).
struct MergeArgs {
  MergeWeights weights = MergeWeights::emulated;
  int num_splits = 0;
  // Work-list plans: each query row's partial rows, or nullptr: num_splits rows per query row.
  const TokenRows* token_rows = nullptr;  // [T]
  // Balanced plans: a request of one split was written by the attention kernel; its rows are skipped.
  bool unsplit_written = false;
  bool base2 = false;
  const float* part_o = nullptr;    // [T, S, 16, 512] (work list: [rows, 16, 512])
  const float* part_lse = nullptr;  // [T, S, 16]      (work list: [rows, 16])
  uint16_t* out = nullptr;          // [T, 16, 512] bf16
  float* lse = nullptr;             // [T, 16] natural log; may be nullptr
  MLACHECK_MUTANT_FIELD
};

}  // namespace mlacheck::gpu::common
