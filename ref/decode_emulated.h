#pragma once
// The emulated mode of the CPU reference: MLA decode with a recipe's numerics (DESIGN.md), so that
// kernel error = gpu − emulated is what a kernel adds beyond its number formats.
//
// Per query row (query i of request b, head h; n = batch.visible_kv(b, i) visible keys):
//  1. Q as the recipe quantizes it (emulated_inputs.h), K and V decoded from the recipe's cache;
//     acc = Σ_d q[d]·k[d] in float32, in order of d (each product is exact in float32 for every
//     format here); s = fl32(acc · score scale), the scale carrying sm_scale (·log2 e for base 2),
//     the Q scale and the KV scale.
//  2. Split-K: the request's keys 0..L-1 are cut into the schedule's ranges (problem/schedule.h;
//     e.g. `num_splits` ranges of ceil(L / num_splits) keys, the seeds' kv_per_split =
//     cdiv(seq_len, NUM_SPLITS); trailing splits may be empty); each query sees the visible part
//     of each range.
//  3. In a split, keys are taken in steps of recipe.softmax_tile (0 = the whole split): m' = max(m,
//     step max), α = b^(m − m'), p_t = b^(s_t − m') (b = e or 2, each fl32 of the exact value),
//     l = fl32(l·α + Σ p_t) with Σ in order, acc = acc·α + Σ_t round_P(p_t)·v_t (P rounded to the
//     recipe's P format, un-normalized; V in the P·V operand type; float32 sums in order of t).
//     The row sum l uses the unrounded p, as aiter's golden model and every seed do.
//  4. The split writes o = fl32(fl32(acc / l) · kv scale) rounded to recipe.partial, and
//     lse = fl32(m + log_b l).
//  5. Merge (float32, splits in order): M = max lse, w_s = b^(lse_s − M), W = Σ w_s,
//     out = bf16(fl32(Σ w_s·o_s) / W), lse = fl32(M + log_b W).
// num_splits = 0 means no split-K: the single pass of step 3 over all keys writes
// out = bf16(o) and lse directly; one split gives the same bits (tests check it).
// A row with no visible key gets out = 0 and lse = -inf; an empty split contributes nothing.
// The returned LSE is the natural log (base-2 recipes: fl32(lse_2 · ln 2)).
// Like the exact mode, the result has the same bits for any thread count and instruction set.
//
// Where the seeds leave a detail open, the choice is stated at its step above or in
// problem/recipe.cpp (split counts, tile sizes, partial format); kernels may differ from these by
// a few float32 ulps before the bf16 output, which the gate's kernel bound allows for.
#include <cstdint>
#include <functional>
#include <utility>
#include <span>
#include <vector>

#include "problem/batch.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "problem/split_plan.h"
#include "ref/progress.h"

namespace mlacheck::ref {

// What a run can do beyond the recipe's own output (all off by default).
struct EmulationOptions {
  // Decode only these requests (indices into the batch, any order); the others' rows stay 0 with
  // lse -inf. Empty = every request. Q is still quantized over the whole tensor (per-tensor
  // scales see every request, as the kernel's do).
  std::span<const int64_t> requests;
  // drift's waterfall: one rounding of the recipe made exact at a time. exact_q: Q enters as its
  // bf16 values; exact_k / exact_v: K / V come from the bf16 cache (cache.bf16 must be given), so
  // the KV scale then applies only where the quantized side remains. P and partial rounding are
  // made exact through the recipe (p=f32, partial=f32).
  bool exact_q = false, exact_k = false, exact_v = false;
  bool keep_f32_output = false;   // EmulatedResult::out_f32: the output before its bf16 rounding
  bool capture_partials = false;  // EmulatedResult::partial_out / partial_lse
  // EmulatedResult::pv_spread / p_underflow (check/tolerance.h, schedule_free_bound). Needs a
  // single pass with one softmax step (the weights are then those of the row max).
  bool sensitivity = false;
  // EmulatedResult::p_flip: the keys whose P may round to the neighbouring code in a kernel of the
  // same schedule, whose P differs from this one's by at most a relative flip_noise (the caller's
  // bound on exp and score rounding, check/tolerance.h flip_noise).
  bool p_flips = false;
  double flip_noise = 0;
  // Planted faults, for `mlacheck power`'s wrong answers made in the recipe's own numerics (a
  // kernel with the bug quantizes as the recipe does and keeps its split plan):
  //   fault_skip_rope: the scores sum over the 512 latent dims only (Q still quantized whole);
  //   fault_masked_keys: per request, the key positions [first, last) it names take no part (as
  //   if their scores were -inf); a split whose keys are all masked contributes nothing.
  bool fault_skip_rope = false;
  std::function<std::pair<int64_t, int64_t>(int64_t request, int64_t kv_len)> fault_masked_keys;
  // Recipe::fp8_acc tc64 / tc: the order in which a kernel feeds the products of a run of 64 to the
  // tensor core (Q·Kᵀ: a 64-dim box; P·V: 64 keys from a softmax step's first). Position p of the
  // run (K step p / 32) holds the product of the run's dim / key order[p]. The model aligns a K
  // step's terms together, so which dims share a step changes the sums: a kernel whose operand
  // layout interleaves them (gpu::Strategy's tc orders) is replayed only with its own order. Empty:
  // in order; otherwise a permutation of 0 .. 63 (problem::ProblemError if not).
  std::span<const int> tc_qk_order, tc_pv_order;
};

struct EmulatedResult {
  std::vector<uint16_t> out;  // [total_q, 16, 512] bf16 bits
  std::vector<float> lse;     // [total_q, 16], natural log
  std::vector<float> out_f32;  // keep_f32_output: [total_q, 16, 512] before the bf16 rounding
  // capture_partials: each split's normalized output (after the partial format) and its LSE
  // (natural log), splits in order; -inf / 0 for splits past a request's last one or empty.
  int64_t partial_splits = 0;        // S
  std::vector<float> partial_out;    // [total_q, S, 16, 512]
  std::vector<float> partial_lse;    // [total_q, S, 16]
  std::vector<float> partial_sum_rounding;  // [total_q, S, 16]: row_sum_rounding of each split
  // row_sum_rounding [total_q, 16]: how far, relative, a kernel that sums the row sum l from the
  // rounded P (as some do: the P that multiplies V) can move l, so its LSE by -ln(1 - this): sum
  // over the keys of the largest rounding error of P_j in the P format (0 at P = 1 exactly, u P_j
  // for normal P_j, min(h, P_j) below the smallest normal), over l; against the running maxima of
  // this emulation's schedule (a single pass's row max bounds every schedule's: a larger P_j c in
  // units of a smaller running max has the same relative and a smaller absolute error), the split
  // partials' largest for the merged row. 0 for f32 P.
  std::vector<float> row_sum_rounding;
  // sensitivity, per element (t, h, d), with w_j = P_j / l the weight of key j (P rounded), v_j
  // its V value (times the output scale), o = sum_j w_j v_j, sums over the keys not at the row max
  // (P = 1 exactly there in every schedule), U = the keys whose unrounded P_j is below the P
  // format's smallest normal and h half its subnormal step:
  //   pv_spread       = sqrt(max(sum_j w_j^2 v_jd^2, sum_j w_j^2 (v_jd - o_d)^2))
  //   pv_abs          = sum_j w_j |v_jd|
  //   p_underflow     = sqrt(sum_{j in U} min(h, P_j)^2 v_jd^2) / l
  //   p_underflow_abs = sum_{j in U} min(h, P_j) |v_jd| / l
  //   pv_spread_all, pv_abs_all: pv_spread and pv_abs over every key, the row max's too (a
  //                 split partial's rounding scales with all of its keys)
  //   score_range = max_j s_j - min_j s_j per (t, h) [T, 16], natural-log units: every P a
  //                 kernel rounds, against any running max, lies in [e^-range, e^range]
  std::vector<float> pv_spread, pv_abs, p_underflow, p_underflow_abs, pv_spread_all, pv_abs_all,
      score_range;
  // p_flips, per element: sum over the keys that may flip of (code step) x |v_jd| x (their weight's
  // scale: the later rescalings, 1 / l and the merge weight): what every possible flip together can
  // move the output by, in this schedule.
  std::vector<float> p_flip;
  // capture_partials with p_flips: p_flip of each split's own output (its keys, over its l), as
  // partial_out [total_q, S, 16, 512]; what a split partial's P codes can flip by.
  std::vector<float> partial_p_flip;
};

// q_bf16: [total_q, 16, 576] bf16 bits; cache: in recipe.kv's format with batch.cache_rows() rows
// (KvCaches builds it). num_splits >= 1 for split-K, 0 for none (recipe.num_splits is the
// recipe's default). Throws problem::ProblemError on a size or format mismatch.
EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               int num_splits, Progress* progress = nullptr);
// The same with a split plan (problem/split_plan.h): uniform plans are the overload above; a
// chunked plan gives each request its own split count (step 2 per request); a balanced plan cuts
// the batch's cost axis (problem::BatchSplits). S (partial_splits) is the most ranges any request
// of the batch gets.
EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               const problem::SplitPlan& plan, Progress* progress = nullptr);
EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               const problem::SplitPlan& plan, const EmulationOptions& options,
                               Progress* progress = nullptr);
// Any declared schedule (problem/schedule.h): its ranges replace step 2 and its softmax_tile
// replaces recipe.softmax_tile in step 3.
EmulatedResult decode_emulated(const problem::Batch& batch, std::span<const uint16_t> q_bf16,
                               const problem::KvCache& cache, const problem::Recipe& recipe,
                               const problem::Schedule& schedule,
                               const EmulationOptions& options = {}, Progress* progress = nullptr);

}  // namespace mlacheck::ref
