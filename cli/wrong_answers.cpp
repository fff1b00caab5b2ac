#include "cli/wrong_answers.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>

#include <fmt/core.h>

#include "problem/kv_cache.h"
#include "problem/schedule.h"
#include "problem/shape.h"
#include "problem/split_plan.h"
#include "quant/bf16.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"

namespace mlacheck::cli {
namespace {

using problem::Batch;
using problem::kQkDim;

// A page-size-1 page table over the same cache without the keys `drop(b, L)` names for request
// b: [first, last) key positions. Queries keep their positions, so for q_len > 1 the causal rule
// applies to the shortened lists (a kernel that skips keys sees the same thing).
template <class Drop>
std::optional<Batch> without_keys(const Batch& b, Drop drop) {
  std::vector<int32_t> kv_indptr{0}, indices;
  for (int64_t r = 0; r < b.num_requests(); ++r) {
    const auto [first, last] = drop(r, b.kv_len(r));
    for (int64_t t = 0; t < b.kv_len(r); ++t)
      if (t < first || t >= last) indices.push_back(static_cast<int32_t>(b.kv_row(r, t)));
    kv_indptr.push_back(static_cast<int32_t>(indices.size()));
  }
  if (kv_indptr.back() == b.total_kv()) return std::nullopt;  // nothing dropped
  return Batch({b.qo_indptr().begin(), b.qo_indptr().end()}, std::move(kv_indptr), std::move(indices),
               1, b.cache_rows());
}

// Rotates every 576-dim row left by `by` dims.
std::vector<uint16_t> rotate_rows(std::span<const uint16_t> x, int by) {
  std::vector<uint16_t> out(x.size());
  for (std::size_t row = 0; row < x.size() / kQkDim; ++row)
    for (int d = 0; d < kQkDim; ++d) out[row * kQkDim + d] = x[row * kQkDim + (d + by) % kQkDim];
  return out;
}


}  // namespace

const std::vector<float>* WrongAnswers::exact_output(const std::string& key, auto make) {
  auto it = exact_.find(key);
  if (it == exact_.end()) {
    std::optional<std::vector<float>> out = make();
    if (!out) return nullptr;
    it = exact_.emplace(key, std::move(*out)).first;
  }
  return &it->second;
}

std::vector<check::WrongAnswer> WrongAnswers::for_recipe(const problem::Recipe& recipe) {
  const GoldenCase& c = case_;
  const Batch& b = c.batch;
  std::vector<check::WrongAnswer> wrong{check::all_zeros(check::OutputLayout::from_batch(b))};

  // The bugs that change which keys or scores count. Output: computed in fp64 (numerics_ exact),
  // or in the recipe's own numerics with its preset schedule, scored beside that emulation (the
  // baseline). LSE: always in the recipe's numerics (an fp64 LSE would differ from the recipe's by
  // its Q and K quantization alone, which a kernel with the bug still does).
  const bool in_recipe = numerics_ == WrongAnswerNumerics::recipe;
  const ref::EmulatedResult& correct = emulated_result(c, recipe);
  std::vector<float> baseline;
  if (in_recipe) baseline = widen_bf16(correct.out);
  const auto with_fault = [&](ref::EmulationOptions faults) {
    return ref::decode_emulated(b, c.q, golden_cache(c, recipe), recipe,
                                problem::Schedule::from_plan(problem::SplitPlan::uniform(recipe.num_splits),
                                                             recipe.softmax_tile),
                                faults);
  };
  const auto answer = [&](std::string name, std::string what, const ref::EmulatedResult& faulted,
                          const std::vector<float>* exact) {
    return check::WrongAnswer{std::move(name), std::move(what),
                              in_recipe ? widen_bf16(faulted.out) : *exact, false,
                              in_recipe ? baseline : std::vector<float>{}, faulted.lse};
  };
  // Keys [first, last) of each request left out: masked in the recipe's emulation (same positions,
  // same split plan), and for the fp64 output a page table without them.
  const auto without = [&](const std::string& name, std::string what, auto drop) {
    const auto fewer = without_keys(b, drop);
    if (!fewer) return;  // nothing dropped in this case
    const std::vector<float>* exact = nullptr;
    if (!in_recipe)
      exact = exact_output(name + what, [&] {
        return std::optional<std::vector<float>>(ref::decode_exact(*fewer, c.q, c.kv).out);
      });
    ref::EmulationOptions faults;
    faults.fault_masked_keys = drop;
    wrong.push_back(answer(name, std::move(what), with_fault(faults), exact));
  };
  without("drop-token", "the middle key of every request left out", [](int64_t, int64_t len) {
    return std::pair<int64_t, int64_t>{len / 2, std::min(len, len / 2 + 1)};
  });
  {
    ref::EmulationOptions faults;
    faults.fault_skip_rope = true;
    const std::vector<float>* exact = nullptr;
    if (!in_recipe)
      exact = exact_output("skip-rope", [&] {
        std::vector<uint16_t> q_no_rope = c.q;
        for (std::size_t i = 0; i < q_no_rope.size(); ++i)
          if (static_cast<int>(i % kQkDim) >= problem::kVDim) q_no_rope[i] = 0;
        return std::optional<std::vector<float>>(ref::decode_exact(b, q_no_rope, c.kv).out);
      });
    wrong.push_back(answer("skip-rope", "scores from the 512 latent dims only", with_fault(faults), exact));
  }

  if (recipe.kv != problem::KvFormat::bf16) {
    problem::KvCache cache = golden_cache(c, recipe);
    Mxfp4CacheData stored;
    std::vector<uint8_t> unit_scales;
    std::string what;
    if (recipe.kv == problem::KvFormat::fp8) {
      cache.fp8_scale = 1.0f;  // what multiplies; codes quantized on read keep their own scale
      what = fmt::format("fp8 KV scale {} taken as 1", c.fp8->scale);
    } else {
      // The codes read with other scales: they must be stored, not quantized on read (power holds
      // a derived cache whole for this one answer).
      if (c.mxfp4->derived) {
        stored = stored_mxfp4(c);
        cache.on_read.reset();
        cache.mxfp4 = stored.packed;
      }
      const auto scale_bytes = static_cast<std::size_t>(b.cache_rows()) * problem::kMxfp4RowScales;
      unit_scales.assign(scale_bytes, 127);  // E8M0 127 = 2^0
      cache.mxfp4_scale = unit_scales;
      what = "every MXFP4 block scale taken as 1";
    }
    ref::EmulatedResult e = ref::decode_emulated(b, c.q, cache, recipe, recipe.num_splits);
    wrong.push_back({"forget-kv-scale", what, widen_bf16(e.out), false, {}, std::move(e.lse)});
  }

  // Q and K rotated together: the scores, so the LSE, are the correct ones; only V is wrong.
  constexpr int kShift = problem::kRopeDim;  // V = dims 64..575, the rope dims included
  wrong.push_back({"v-wrong-dims", "V read from dims 64..575 of the row",
                   *exact_output("v-wrong-dims", [&] {
                     return std::optional<std::vector<float>>(
                         ref::decode_exact(b, rotate_rows(c.q, kShift), rotate_rows(c.kv, kShift)).out);
                   }),
                   false, {}, correct.lse});

  const int splits = std::max(recipe.num_splits, 2);
  without("drop-split", fmt::format("the last of {} KV splits left out of the merge", splits),
          [splits](int64_t, int64_t len) {
            const int64_t per = (len + splits - 1) / splits;
            return std::pair<int64_t, int64_t>{std::min<int64_t>(per * (splits - 1), len), len};
          });
  return wrong;
}

}  // namespace mlacheck::cli
