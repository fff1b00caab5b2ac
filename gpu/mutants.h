#pragma once
// Planted faults (issue 12, `mlacheck verify --mutants`): realistic kernel bugs, each one a branch in
// the GPU code that only a build with -DMLACHECK_MUTANTS=ON contains. The suite measures its own
// power with them: each fault is switched on in turn, the chosen tier is run, and a fault counts as
// caught when some (case, strategy) row fails. In a normal build MLACHECK_MUTANT(args, m) is the
// constant false and the args carry no field: the planted branches compile to nothing.
//
// The kernels read the active fault from their argument structs (gpu/common/args.h), which the
// shared decode steps (gpu/common/decode_steps.cpp) stamp from active_mutant().
#include <cstdint>
#include <span>
#include <string_view>

namespace mlacheck::gpu {

enum class Mutant : int32_t {
  none = 0,
  dropped_partial_tile,       // mma: the last, partly filled tile of a split is skipped
  reversed_causal_bound,      // mma: query i of a q_len request sees len - i keys, not len - q_len + i + 1
  skipped_rope_dims,          // mma: Q·Kᵀ leaves out dims 512..575 (the rope part)
  unrescaled_accumulator,     // mma: acc is not multiplied by α when the running max grows
  lse_in_base2,               // merge + single pass: the LSE written is log2 Σ, not ln Σ
  short_copy_wait,            // mma: the copy pipeline waits one stage short (a race)
  read_past_last_key,         // mma: the copy fills the row after the last key instead of zeros
  page_number_as_row,         // both: a page-table entry is used as a cache row, not row / page_size
  equal_weight_merge,         // merge: split partials merged with weight 1 instead of b^(lse_s - M)
  fp8_q_scale_one_block,      // Q quantization: the fp8 per-tensor scale from the first block's amax
  mxfp4_q_amax_skips_last,    // Q quantization: an MXFP4 block's amax skips its last element
  persistent_partials_unscaled_by_q_len,  // split plan: partial rows not scaled by q_len
  packed_token_mask,          // hopper: every token of a packed group masked by its last token's keys
};

// Which code the fault is planted in, so a report can say when the selected strategies cannot
// reach it (a portable-only run cannot catch a fault of the mma kernel).
enum class MutantSite : uint8_t { mma_kernel, shared_steps, hopper_kernel };

struct MutantInfo {
  Mutant id;
  std::string_view name;
  std::string_view description;
  MutantSite site;
};

// Every fault but `none`, in enum order.
std::span<const MutantInfo> mutants();

// True when this binary was built with the planted branches (-DMLACHECK_MUTANTS=ON).
bool mutants_built();

// The fault the next launches carry (process-wide; `none` unless verify --mutants sets it). Setting
// one other than `none` in a build without mutants throws std::logic_error.
void set_active_mutant(Mutant m);
Mutant active_mutant();

}  // namespace mlacheck::gpu

#if defined(MLACHECK_MUTANTS)
#define MLACHECK_MUTANT_FIELD int32_t mutant = 0;  // gpu/mutants.h: the planted fault, 0 = none
#define MLACHECK_MUTANT(args, m) ((args).mutant == static_cast<int32_t>(::mlacheck::gpu::Mutant::m))
#else
#define MLACHECK_MUTANT_FIELD
#define MLACHECK_MUTANT(args, m) false
#endif
