#include "gpu/mutants.h"

#include <array>
#include <stdexcept>

namespace mlacheck::gpu {
namespace {

// The twelve bugs planted by hand in issue 12's measurement, then the ones planted with later
// kernels, one entry each.
constexpr std::array kMutants{
    MutantInfo{Mutant::dropped_partial_tile, "dropped-partial-tile",
               "the last, partly filled key tile of a split is skipped", MutantSite::mma_kernel},
    MutantInfo{Mutant::reversed_causal_bound, "reversed-causal-bound",
               "query i of a q_len request sees len - i keys instead of len - q_len + i + 1",
               MutantSite::mma_kernel},
    MutantInfo{Mutant::skipped_rope_dims, "skipped-rope-dims", "Q.K^T leaves out dims 512..575",
               MutantSite::mma_kernel},
    MutantInfo{Mutant::unrescaled_accumulator, "unrescaled-accumulator",
               "the P.V accumulator is not rescaled when the running max grows", MutantSite::mma_kernel},
    MutantInfo{Mutant::lse_in_base2, "lse-in-base2", "the LSE written is log2 of the sum, not ln",
               MutantSite::shared_steps},
    MutantInfo{Mutant::short_copy_wait, "short-copy-wait",
               "the copy pipeline waits one stage short (a shared-memory race)", MutantSite::mma_kernel},
    MutantInfo{Mutant::read_past_last_key, "read-past-last-key",
               "the copy fills the row after the last key (not zeros) into the tile",
               MutantSite::mma_kernel},
    MutantInfo{Mutant::page_number_as_row, "page-number-as-row",
               "a page-table entry is used as a cache row (not times page_size)", MutantSite::shared_steps},
    MutantInfo{Mutant::equal_weight_merge, "equal-weight-merge",
               "split partials are merged with equal weights", MutantSite::shared_steps},
    MutantInfo{Mutant::fp8_q_scale_one_block, "fp8-q-scale-one-block",
               "the fp8 per-tensor Q scale comes from the first block's amax only", MutantSite::shared_steps},
    MutantInfo{Mutant::mxfp4_q_amax_skips_last, "mxfp4-q-amax-skips-last",
               "an MXFP4 Q block's amax skips its last element", MutantSite::shared_steps},
    MutantInfo{Mutant::persistent_partials_unscaled_by_q_len, "persistent-partials-unscaled",
               "the persistent plan's partial rows are not scaled by q_len", MutantSite::shared_steps},
    MutantInfo{Mutant::packed_token_mask, "packed-token-mask",
               "every query token of a packed group (q_len > 1) is masked by the group's last token's keys",
               MutantSite::hopper_kernel},
};

Mutant g_active = Mutant::none;

}  // namespace

std::span<const MutantInfo> mutants() { return kMutants; }

bool mutants_built() {
#if defined(MLACHECK_MUTANTS)
  return true;
#else
  return false;
#endif
}

void set_active_mutant(Mutant m) {
  if (m != Mutant::none && !mutants_built())
    throw std::logic_error("this binary has no planted faults: build with -DMLACHECK_MUTANTS=ON");
  g_active = m;
}

Mutant active_mutant() { return g_active; }

}  // namespace mlacheck::gpu
