#include "gpu/registry.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "gpu/availability.h"
#include "gpu/common/config.h"
#include "gpu/fast/config.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/e4m3_order.h"
#include "gpu/portable/config.h"
#include "gpu/workspace.h"
#include "quant/formats.h"

namespace mlacheck::gpu {
namespace {

// One row per strategy. The tunables of every row and why they are what they are:
// - threads: the portable kernel is compiled for portable::kThreads (16 heads x 16 keys); no
//   measurement has chosen it, it is what makes the thread mapping plain.
// - splits of split-k: the recipe's own default (problem/recipe.cpp, each with its source), so
//   that the strategy computes what the recipe's seed computes; not tuned for speed.
struct Row {
  std::string_view recipe;
  Schedule schedule;
  FamilyId family;
  Tunables tunables;
  std::string_view why;
  // How the kernel sums fp8 x fp8 products, where that differs from the preset's float32.
  problem::Fp8Accumulation fp8_acc = problem::Fp8Accumulation::f32;
};

constexpr std::string_view kWhySingle = "threads: portable kernel's 16 heads x 16 keys (not tuned)";
constexpr std::string_view kWhySplit =
    "threads: 16 heads x 16 keys; splits: the recipe's default (problem/recipe.cpp; not tuned)";

constexpr std::string_view kWhyFast =
    "warps, tile, stages: data/tunables/fast.def; splits: gpu/fast/split_rule.h per batch";
constexpr Tunables kFast{0, 0, true, fast::kTileKeys};
constexpr Tunables kFastPersistent{0, 0, false, fast::kTileKeys};
constexpr std::string_view kWhyPersistent =
    "warps, tile, stages: data/tunables/fast.def; chunk per batch: gpu/fast/split_rule.h";

constexpr Tunables kHopper{0, 0, true, hopper::kTileKeys};
constexpr std::string_view kWhyHopper =
    "a producer warp (bulk tensor copies) and two consumer warpgroups, 64-key tiles, 2 stages, q_len > 1 two tokens a "
    "tile (gpu/hopper/config.h); splits: the mma family's wave model with this tile";
constexpr Tunables kHopperPersistent{0, 0, false, hopper::kTileKeys};
constexpr std::string_view kWhyHopperPersistent =
    "the split-k hopper kernel's tiles and roles; one block per SM taking the items of a balanced plan in turn "
    "(problem/split_plan.h: equal shares of the batch's tiles plus a request overhead, gpu/hopper/config.h; with "
    "fewer requests than SMs one piece a block where its pieces are no longer), made by a kernel on the device";
constexpr std::string_view kWhyHopperFp8 =
    "a producer warp (bulk copies of raw rows into a ring of 8 parts of 16 keys), two consumer warpgroups, "
    "64-key tiles decoded to bf16 by their owner (gpu/hopper/config.h); splits: the mma family's wave "
    "model with this tile (not re-measured for fp8)";
constexpr std::string_view kWhyHopperA8w8 =
    "the a16w8 hopper kernel's producer and owners (a ring of 15 parts: e4m3 value tiles take half the room), both "
    "products on the e4m3 product: K's codes as Q·Kᵀ's register operand, V's codes stored transposed for P·V, "
    "P rounded to fp8; splits: the mma family's wave model with this tile (not re-measured)";

constexpr std::string_view kWhyHopperMxfp4 =
    "a producer warp (bulk copies of code rows, the block scales by a 1-D tensor map) into a ring of 10 parts "
    "of 16 keys, two consumer warpgroups, 64-key tiles decoded to bf16 by table lookups in their owner "
    "(gpu/hopper/config.h); splits: the mma family's wave model with this tile (not re-measured for MXFP4)";

constexpr std::string_view kWhyHopperA4w4 =
    "the a16w4 hopper kernel with Q quantized to MXFP4 (decoded to bf16 at staging), P·V on f16 operands "
    "(P and V rounded to f16), base 2; tile: 64 keys, the softmax step (the recipe's 32 overridden, as the mma row does); splits: "
    "the mma family's wave model (not re-measured)";

constexpr Row kTable[] = {
    {"a16w16", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a16w16", Schedule::split_k, FamilyId::portable, {portable::kThreads, 32}, kWhySplit},
    {"a16w8", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a16w8", Schedule::split_k, FamilyId::portable, {portable::kThreads, 32}, kWhySplit},
    {"a8w8", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a8w8", Schedule::split_k, FamilyId::portable, {portable::kThreads, 32}, kWhySplit},
    {"a8w8-static", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a8w8-static", Schedule::split_k, FamilyId::portable, {portable::kThreads, 32}, kWhySplit},
    {"a8w8-cast", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a8w8-cast", Schedule::split_k, FamilyId::portable, {portable::kThreads, 8}, kWhySplit},
    {"a16w4", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a16w4", Schedule::split_k, FamilyId::portable, {portable::kThreads, 8}, kWhySplit},
    {"a4w4", Schedule::single_pass, FamilyId::portable, {portable::kThreads, 0}, kWhySingle},
    {"a4w4", Schedule::split_k, FamilyId::portable, {portable::kThreads, 4}, kWhySplit},
    {"a16w16", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a16w16", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a16w8", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a16w8", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a8w8", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a8w8", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a8w8-static", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a8w8-static", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a8w8-cast", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a8w8-cast", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a16w4", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a16w4", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a4w4", Schedule::split_k, FamilyId::mma, kFast, kWhyFast},
    {"a4w4", Schedule::persistent, FamilyId::mma, kFastPersistent, kWhyPersistent},
    {"a16w16", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopper},
    {"a16w8", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopperFp8},
    {"a16w4", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopperMxfp4},
    {"a4w4", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopperA4w4},
    {"a8w8", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopperA8w8,
     hopper::kE4m3Accumulation},
    {"a8w8-static", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopperA8w8,
     hopper::kE4m3Accumulation},
    {"a8w8-cast", Schedule::split_k, FamilyId::hopper, kHopper, kWhyHopperA8w8,
     hopper::kE4m3Accumulation},
    {"a16w16", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent},
    {"a16w8", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent},
    {"a16w4", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent},
    {"a4w4", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent},
    {"a8w8", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent,
     hopper::kE4m3Accumulation},
    {"a8w8-static", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent,
     hopper::kE4m3Accumulation},
    {"a8w8-cast", Schedule::persistent, FamilyId::hopper, kHopperPersistent, kWhyHopperPersistent,
     hopper::kE4m3Accumulation},
};

std::vector<Strategy> build_table() {
  std::vector<Strategy> out;
  for (const Row& row : kTable) {
    const auto recipe = problem::find_recipe(row.recipe);
    if (!recipe)  // a programming error; tests/gpu/registry_test.cpp keeps it from shipping
      throw std::logic_error("gpu registry: row names unknown recipe " + std::string(row.recipe));
    Strategy s;
    s.family = &family(row.family);
    s.name = std::string(row.recipe) + "/" + std::string(to_string(row.schedule)) + "/" +
             std::string(s.family->name);
    s.recipe = *recipe;
    s.recipe.fp8_acc = row.fp8_acc;
    if (s.family->softmax_base) s.recipe.base = *s.family->softmax_base;
    if (row.fp8_acc == problem::Fp8Accumulation::tc64) {  // the e4m3 kernels' operand orders
      s.tc_qk_order = hopper::kE4m3QkRunOrder;
      s.tc_pv_order = hopper::kE4m3PvRunOrder;
    }
    if (row.tunables.softmax_tile > 0) s.recipe.softmax_tile = row.tunables.softmax_tile;
    s.schedule = row.schedule;
    s.tunables = row.tunables;
    s.why = row.why;
    out.push_back(std::move(s));
  }
  return out;
}

const char* fp8_name(quant::Fp8Format f) {
  return f == quant::Fp8Format::e4m3fn ? "e4m3fn" : "e4m3fnuz";
}

}  // namespace

std::string_view to_string(Schedule s) {
  switch (s) {
    case Schedule::single_pass: return "single-pass";
    case Schedule::split_k: return "split-k";
    case Schedule::persistent: return "persistent";
  }
  return "?";
}

std::string_view to_string(ClusterMerge m) {
  switch (m) {
    case ClusterMerge::family_rule: return "rule";
    case ClusterMerge::cluster: return "cluster";
    case ClusterMerge::kernel: return "kernel";
  }
  return "?";
}

std::optional<std::string> Strategy::supports(const problem::Batch& batch,
                                              const problem::KvCache& cache) const {
  using std::to_string;
  if (cache.format != recipe.kv)
    return "recipe " + std::string(recipe.name) + " reads a " +
           std::string(problem::to_string(recipe.kv)) + " KV cache, this one is " +
           std::string(problem::to_string(cache.format));
  if (cache.format == problem::KvFormat::fp8 && cache.fp8_format != recipe.fp8)
    return std::string("the cache holds fp8 ") + fp8_name(cache.fp8_format) + ", recipe " +
           std::string(recipe.name) + " reads " + fp8_name(recipe.fp8);
  if (cache.rows != batch.cache_rows())
    return "the cache has " + to_string(cache.rows) + " rows, the batch layout " +
           to_string(batch.cache_rows());
  if (cache.on_read && cache.format != problem::KvFormat::bf16)
    return "the cache is quantized on read (the CPU reference's way); a kernel needs stored rows";
  if (recipe.softmax_tile < 0) return "softmax_tile " + to_string(recipe.softmax_tile) + " < 0";
  if (auto refusal = family->supports(*this, batch)) return refusal;
  const problem::SplitPlan plan = emulated_plan(batch, planning_multiprocessors());
  const int splits = std::max(1, plan.max_splits(batch.max_kv_len()));
  if (schedule == Schedule::split_k && splits > common::kMaxSplits)
    return "split count " + to_string(splits) + " outside 1.." + to_string(common::kMaxSplits);
  if (batch.num_requests() * splits > INT32_MAX)
    return to_string(batch.num_requests()) + " requests x " + to_string(splits) +
           " splits exceed the grid";
  return std::nullopt;
}

problem::SplitPlan Strategy::emulated_plan(const problem::Batch& batch, int multiprocessors) const {
  return family->split_plan(*this, {batch.num_requests(), batch.max_kv_len(), batch.total_kv()},
                            multiprocessors);
}

WorkspaceLayout Strategy::workspace_layout(const problem::Batch& batch, int multiprocessors) const {
  return gpu::workspace_layout(recipe, emulated_plan(batch, multiprocessors), batch.total_q(), batch.num_requests(),
                               batch.max_kv_len());
}

std::size_t Strategy::workspace_bytes(const problem::Batch& batch, int multiprocessors) const {
  return workspace_layout(batch, multiprocessors).bytes;
}

void Strategy::launch(const DecodeParams& params, StreamHandle stream) const {
  if (const auto missing = not_built_here(*family))
    throw std::runtime_error("strategy " + name + " cannot run: " + *missing);
  family->launcher(*this, params, stream);
}

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> table = build_table();
  return table;
}

const Strategy* find_strategy(std::string_view name) {
  for (const Strategy& s : strategies())
    if (s.name == name) return &s;
  return nullptr;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point (the last '*'), linear in practice.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<const Strategy*> match_strategies(std::string_view globs) {
  std::vector<std::string_view> any_of;
  for (std::size_t start = 0;;) {
    const std::size_t comma = globs.find(',', start);
    any_of.push_back(globs.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::vector<const Strategy*> out;
  for (const Strategy& s : strategies())
    for (std::string_view glob : any_of)
      if (glob_match(glob, s.name)) {
        out.push_back(&s);
        break;
      }
  return out;
}

}  // namespace mlacheck::gpu
