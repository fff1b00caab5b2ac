// gpu/registry.h (every build): the one table of strategies, its name grammar, supports() and the
// glob that verify/bench/tests select with.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <span>
#include <stdexcept>
#include <string>

#include "gpu/availability.h"
#include "gpu/common/args.h"
#include "gpu/family.h"
#include "gpu/fast/instances.h"
#include "gpu/fast/split_rule.h"
#include "gpu/hopper/config.h"
#include "gpu/hopper/e4m3_order.h"
#include "gpu/hopper/instances.h"
#include "gpu/portable/instances.h"
#include "gpu/registry.h"
#include "gpu/workspace.h"
#include "problem/batch.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "problem/shape.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu {
namespace {

#if defined(MLACHECK_HAVE_SM90A)
constexpr bool kBuiltForSm90a = true;
#else
constexpr bool kBuiltForSm90a = false;
#endif

problem::KvCache cache_of(problem::KvFormat f, int64_t rows) {
  problem::KvCache c;
  c.format = f;
  c.rows = rows;
  return c;
}

TEST(GpuRegistry, EveryRecipeHasBothSchedulesAndNamesFollowTheGrammar) {
  std::set<std::string> names;
  for (const Strategy& s : strategies()) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate " << s.name;
    ASSERT_NE(s.family, nullptr) << s.name;
    EXPECT_EQ(s.name, std::string(s.recipe.name) + "/" + std::string(to_string(s.schedule)) + "/" +
                          std::string(s.family->name));
    EXPECT_TRUE(problem::find_recipe(s.recipe.name).has_value()) << s.name;
    EXPECT_FALSE(s.why.empty()) << s.name;
    EXPECT_EQ(find_strategy(s.name), &s);
    // The emulation runs the strategy's softmax step: the kernel's tile for the mma family.
    if (s.tunables.softmax_tile > 0) {
      EXPECT_EQ(s.recipe.softmax_tile, s.tunables.softmax_tile) << s.name;
    } else {
      EXPECT_EQ(s.recipe.softmax_tile, problem::find_recipe(s.recipe.name)->softmax_tile) << s.name;
    }
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
    // Every family is built where its vendor's runtime is, the hopper family where sm_90a is too.
    if (s.family->id != FamilyId::hopper || kBuiltForSm90a) {
      EXPECT_EQ(not_built_here(*s.family), std::nullopt) << s.name;
    } else {
      EXPECT_TRUE(not_built_here(*s.family).has_value()) << s.name;
    }
#else
    EXPECT_EQ(s.family->launcher, nullptr) << s.name;
    EXPECT_TRUE(not_built_here(*s.family).has_value()) << s.name;
#endif
  }
  // Only the hopper kernels on the e4m3 product (the all-fp8 recipes) sum fp8 products otherwise
  // than in float32, and the emulation must be told (gpu/hopper/config.h kE4m3Accumulation).
  for (const Strategy& s : strategies()) {
    const bool e4m3 = s.family->id == FamilyId::hopper && s.recipe.q != problem::QFormat::bf16 &&
                      s.recipe.kv == problem::KvFormat::fp8;
    EXPECT_EQ(s.recipe.fp8_acc, e4m3 ? hopper::kE4m3Accumulation : problem::Fp8Accumulation::f32) << s.name;
    // Their emulation takes the kernels' operand orders: a permutation of a run's 64 each.
    const bool ordered = s.recipe.fp8_acc == problem::Fp8Accumulation::tc64;
    for (const std::span<const int> order : {s.tc_qk_order, s.tc_pv_order}) {
      ASSERT_EQ(order.size(), ordered ? 64u : 0u) << s.name;
      std::set<int> seen(order.begin(), order.end());
      EXPECT_EQ(seen.size(), order.size()) << s.name;
      if (!order.empty()) {
        EXPECT_TRUE(*seen.begin() == 0 && *seen.rbegin() == 63) << s.name;
      }
    }
  }
  // K step 0 of a Q·Kᵀ box holds the dims 16 t + r (t 0..3, r 0..7), step 1 the others (so the
  // emulation's steps are not the box's halves); P·V's steps are the tile's halves of 32 keys.
  for (int p = 0; p < 64; ++p) {
    EXPECT_EQ(hopper::kE4m3QkRunOrder[static_cast<std::size_t>(p)] % 16 / 8, p / 32) << p;
    EXPECT_EQ(hopper::kE4m3PvRunOrder[static_cast<std::size_t>(p)] / 32, p / 32) << p;
  }
  for (const problem::Recipe& r : problem::recipes()) {
    EXPECT_NE(find_strategy(std::string(r.name) + "/single-pass/portable"), nullptr) << r.name;
    EXPECT_NE(find_strategy(std::string(r.name) + "/split-k/portable"), nullptr) << r.name;
  }
  EXPECT_EQ(find_strategy("a8w8/split-k"), nullptr);
}

// What the kernels need of every plan the registry hands them (and the emulation runs), over
// batches from one short request to the largest harness shape: a split count the merge can take,
// no split without a tile of keys (an empty split is wasted work and a block that writes -inf
// partials), persistent chunks of whole tiles that give every SM work on a long batch. (Whether
// the kernel runs exactly the emulated plan is what `verify` checks on the GPU: a different split
// count fails its tight bound.)
TEST(GpuRegistry, EveryPlanIsOneTheKernelsCanRun) {
  // The H200's SMs, an H100 PCIe's, an MI300X's CUs and a small device.
  for (const int multiprocessors : {132, 114, 304, 8})
  for (const Strategy& s : strategies())
    for (const int64_t batch : {1, 4, 32, 64, 131, 132, 133, 256, 1024})
      for (const int64_t len : {1, 63, 64, 65, 1000, 1024, 8192, 65536}) {
        SCOPED_TRACE(s.name + " " + std::to_string(batch) + " x " + std::to_string(len) + " on " +
                     std::to_string(multiprocessors) + " SMs");
        const fast::SplitRule rule = fast::tuned_split_rule(multiprocessors);
        const problem::SplitPlan plan =
            s.emulated_plan(problem::Batch::uniform(batch, len), multiprocessors);
        switch (s.schedule) {
          case Schedule::single_pass:
            EXPECT_FALSE(plan.split_k());
            break;
          case Schedule::split_k:
            EXPECT_EQ(plan.chunk_keys, 0);
            EXPECT_GE(plan.num_splits, 0);
            EXPECT_LE(plan.num_splits, problem::kMaxPlanSplits);
            if (s.tunables.split_rule && plan.num_splits > 1) {
              EXPECT_LE(plan.num_splits, (len + rule.tile_keys - 1) / rule.tile_keys) << "a split without a tile";
            }
            break;
          case Schedule::persistent: {
            if (plan.is_balanced()) {  // the hopper family: equal shares over every SM
              EXPECT_EQ(s.family->id, FamilyId::hopper);
              EXPECT_EQ(plan.balanced_blocks, multiprocessors);
              EXPECT_EQ(plan.unit_keys, rule.tile_keys);
              EXPECT_GE(plan.overhead_units, 0);
              EXPECT_LE(plan.max_splits(len),
                        std::min<int64_t>(multiprocessors, (len + rule.tile_keys - 1) / rule.tile_keys));
              break;
            }
            ASSERT_GT(plan.chunk_keys, 0);
            EXPECT_EQ(plan.chunk_keys % rule.tile_keys, 0) << "chunk " << plan.chunk_keys;
            EXPECT_LE(plan.splits_of(len), problem::kMaxPlanSplits);
            const int64_t items = batch * plan.splits_of(len);
            // Every SM gets an item once there are keys enough, up to what the split limit allows
            // (one request on a 304-CU device: at most 256 items).
            if (batch * len >= int64_t{rule.multiprocessors} * rule.items_per_sm * rule.tile_keys) {
              EXPECT_GE(items, std::min<int64_t>(rule.multiprocessors, batch * problem::kMaxPlanSplits))
                  << "an SM without work";
            }
            break;
          }
        }
      }
}

TEST(GpuRegistry, EveryEntryHasAKernelInstanceAndSupportsItsOwnCache) {
  const problem::Batch batch = problem::Batch::uniform(2, 100);
  for (const Strategy& s : strategies()) {
    switch (s.family->id) {
      case FamilyId::portable:
        EXPECT_TRUE(portable::find_instance(s.recipe).has_value()) << s.name;
        break;
      case FamilyId::mma:
        EXPECT_TRUE(fast::find_instance(s.recipe).has_value()) << s.name;
        break;
      case FamilyId::hopper:
        EXPECT_TRUE(hopper::find_instance(s.recipe).has_value()) << s.name;
        break;
    }
    problem::KvCache cache = cache_of(s.recipe.kv, batch.cache_rows());
    cache.fp8_format = s.recipe.fp8;
    EXPECT_EQ(s.supports(batch, cache), std::nullopt) << s.name;
  }
}

// A family that fixes the softmax base (the hopper family: base 2) has it in every strategy's recipe,
// so that verify emulates what its kernels compute; the other families keep their preset's base.
TEST(GpuRegistry, EveryStrategyComputesInItsFamilysSoftmaxBase) {
  EXPECT_EQ(family(FamilyId::hopper).softmax_base, hopper::kSoftmaxBase);
  EXPECT_EQ(family(FamilyId::portable).softmax_base, std::nullopt);
  EXPECT_EQ(family(FamilyId::mma).softmax_base, std::nullopt);
  int hopper_strategies = 0;
  for (const Strategy& s : strategies()) {
    const auto preset = problem::find_recipe(s.recipe.name);
    ASSERT_TRUE(preset.has_value()) << s.name;
    EXPECT_EQ(s.recipe.base, s.family->softmax_base.value_or(preset->base)) << s.name;
    hopper_strategies += s.family->id == FamilyId::hopper;
  }
  EXPECT_EQ(hopper_strategies, 14) << "7 recipes x split-k and persistent";
}

// Where split-K merges (Tunables::cluster_merge, bench --merge): the hopper split-K strategies take
// every choice; the other families and the hopper persistent ones refuse all but the family's rule,
// saying why, so that no bench row named @merge=cluster runs a merge it does not name.
TEST(GpuRegistry, OnlyHopperSplitKTakesAMergeChoice) {
  const problem::Batch batch = problem::Batch::uniform(2, 100);
  int taken = 0, refused = 0;
  for (const Strategy& base : strategies()) {
    problem::KvCache cache = cache_of(base.recipe.kv, batch.cache_rows());
    cache.fp8_format = base.recipe.fp8;
    for (const ClusterMerge m : {ClusterMerge::cluster, ClusterMerge::kernel}) {
      Strategy s = base;
      s.tunables.cluster_merge = m;
      SCOPED_TRACE(s.name + " @merge=" + std::string(to_string(m)));
      const auto why = s.supports(batch, cache);
      if (s.family->id == FamilyId::hopper && s.schedule == Schedule::split_k) {
        EXPECT_EQ(why, std::nullopt);
        ++taken;
      } else {
        ASSERT_TRUE(why.has_value());
        EXPECT_NE(why->find("merge"), std::string::npos) << *why;
        ++refused;
      }
    }
  }
  EXPECT_GE(taken, 2 * 7) << "every hopper recipe's split-K, both choices";
  EXPECT_GT(refused, taken);
  EXPECT_EQ(to_string(ClusterMerge::family_rule), "rule");
  EXPECT_EQ(to_string(ClusterMerge::cluster), "cluster");
  EXPECT_EQ(to_string(ClusterMerge::kernel), "kernel");
}

TEST(GpuRegistry, UnsupportedIsAnExplicitAnswer) {
  const problem::Batch batch = problem::Batch::uniform(2, 100);
  const Strategy& a8w8 = *find_strategy("a8w8/split-k/portable");
  const auto wrong_format = a8w8.supports(batch, cache_of(problem::KvFormat::bf16, 200));
  ASSERT_TRUE(wrong_format.has_value());
  EXPECT_NE(wrong_format->find("reads a fp8 KV cache, this one is bf16"), std::string::npos)
      << *wrong_format;
  problem::KvCache fnuz = cache_of(problem::KvFormat::fp8, 200);
  fnuz.fp8_format = quant::Fp8Format::e4m3fnuz;
  EXPECT_TRUE(a8w8.supports(batch, fnuz).has_value());
  EXPECT_TRUE(a8w8.supports(batch, cache_of(problem::KvFormat::fp8, 199)).has_value());

  Strategy odd = a8w8;
  odd.recipe.p = problem::PFormat::f32;  // no instance compiled for fp8 KV x f32 P
  const auto no_instance = odd.supports(batch, cache_of(problem::KvFormat::fp8, 200));
  ASSERT_TRUE(no_instance.has_value());
  EXPECT_NE(no_instance->find("no portable kernel instance"), std::string::npos) << *no_instance;
  odd = a8w8;
  odd.tunables.splits = 1000;
  EXPECT_TRUE(odd.supports(batch, cache_of(problem::KvFormat::fp8, 200)).has_value());
}

// The hopper family reads Q in its products' operand type only (gpu/hopper/instances.h reads_q):
// a bf16 Q with bf16 P, MXFP4 codes with f16 P, fp8 codes with fp8 P (f16 operands); any other pair
// is refused by supports() with the reason, never run on the wrong operands. e4m3fnuz caches and Q
// are refused too: the fp8 instances convert e4m3fn only.
static_assert(hopper::reads_q(problem::PFormat::fp8, problem::QFormat::fp8_harness) &&
              hopper::reads_q(problem::PFormat::fp8, problem::QFormat::fp8_static) &&
              hopper::reads_q(problem::PFormat::fp8, problem::QFormat::fp8_cast) &&
              hopper::reads_q(problem::PFormat::fp8, problem::QFormat::fp8_dynamic) &&
              !hopper::reads_q(problem::PFormat::fp8, problem::QFormat::bf16) &&
              !hopper::reads_q(problem::PFormat::fp8, problem::QFormat::mxfp4_dynamic) &&
              !hopper::reads_q(problem::PFormat::bf16, problem::QFormat::fp8_harness) &&
              !hopper::reads_q(problem::PFormat::f16, problem::QFormat::bf16) &&
              !hopper::reads_q(problem::PFormat::f32, problem::QFormat::bf16));
TEST(GpuRegistry, HopperRefusesAQOutsideItsOperandType) {
  const problem::Batch batch = problem::Batch::uniform(2, 100);
  const problem::KvCache fp8 = cache_of(problem::KvFormat::fp8, batch.cache_rows());
  for (const char* name : {"a8w8/split-k/hopper", "a8w8/persistent/hopper"}) {
    SCOPED_TRACE(name);
    const Strategy* base = find_strategy(name);
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(base->supports(batch, fp8), std::nullopt);
    Strategy bf16_q = *base;
    bf16_q.recipe.q = problem::QFormat::bf16;
    const auto why = bf16_q.supports(batch, fp8);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("does not read Q bf16 with P fp8"), std::string::npos) << *why;
    Strategy fnuz = *base;
    fnuz.recipe.fp8 = quant::Fp8Format::e4m3fnuz;
    problem::KvCache fnuz_cache = fp8;
    fnuz_cache.fp8_format = quant::Fp8Format::e4m3fnuz;
    const auto why_fnuz = fnuz.supports(batch, fnuz_cache);
    ASSERT_TRUE(why_fnuz.has_value());
    EXPECT_NE(why_fnuz->find("e4m3fn caches only"), std::string::npos) << *why_fnuz;
  }
  const Strategy* a16w8_base = find_strategy("a16w8/split-k/hopper");
  ASSERT_NE(a16w8_base, nullptr);
  Strategy a16w8 = *a16w8_base;
  a16w8.recipe.q = problem::QFormat::fp8_harness;
  EXPECT_TRUE(a16w8.supports(batch, fp8).has_value());
}

// The families behind the rows: one table, in FamilyId order, each row's name ending in its
// family's; an id outside the enum is refused, never mapped to a family.
TEST(GpuRegistry, EveryRowNamesAFamilyOfTheTable) {
  const auto all = families();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->id, FamilyId::portable);
  EXPECT_EQ(all[1]->id, FamilyId::mma);
  EXPECT_EQ(all[2]->id, FamilyId::hopper);
  EXPECT_FALSE(all[2]->vendors.amd) << "the hopper family is NVIDIA-only";
  for (const Family* f : all) {
    EXPECT_EQ(&family(f->id), f);
    EXPECT_FALSE(f->summary.empty()) << f->name;
    EXPECT_TRUE(f->vendors.nvidia || f->vendors.amd) << f->name;
    EXPECT_NE(f->supports, nullptr) << f->name;
    EXPECT_NE(f->split_plan, nullptr) << f->name;
  }
  for (const Strategy& s : strategies()) EXPECT_EQ(&family(s.family->id), s.family) << s.name;
  EXPECT_THROW(family(static_cast<FamilyId>(7)), std::logic_error);
  EXPECT_EQ(vendors_text(Vendors{true, false}), "NVIDIA only");
  EXPECT_EQ(vendors_text(Vendors{true, true}), "NVIDIA and AMD");
}

// The split rule fills whole waves of the device that runs the launch, whose SM count is a run-time
// input (DecodeParams::multiprocessors), not a constant of the build: fewer SMs, fewer splits for a
// short batch; the persistent chunk grows as the SM count shrinks.
TEST(GpuRegistry, SplitPlansFollowTheDevicesMultiprocessors) {
  const problem::Batch batch = problem::Batch::uniform(4, 8192);
  const Strategy& split = *find_strategy("a16w16/split-k/mma");
  const Strategy& persistent = *find_strategy("a16w16/persistent/mma");
  const int splits_132 = split.emulated_plan(batch, 132).num_splits;
  const int splits_33 = split.emulated_plan(batch, 33).num_splits;
  EXPECT_GT(splits_132, splits_33);
  EXPECT_LE(4 * splits_132, 132);
  EXPECT_LE(4 * splits_33, 33);
  EXPECT_LT(persistent.emulated_plan(batch, 132).chunk_keys,
            persistent.emulated_plan(batch, 33).chunk_keys);
  // The portable family's fixed split count does not depend on the device.
  const Strategy& fixed = *find_strategy("a16w16/split-k/portable");
  EXPECT_EQ(fixed.emulated_plan(batch, 132).num_splits, fixed.emulated_plan(batch, 33).num_splits);
}

// The hopper balanced plan's request overhead is the kernel's (gpu/hopper/config.h
// balanced_overhead_tiles): the all-fp8 kernels' 6, a16w4's 3, the others' 4, unless bench
// --overheads sets one; the emulation takes the same plan.
TEST(GpuRegistry, HopperBalancedOverheadIsTheKernels) {
  const problem::Batch batch = problem::Batch::uniform(32, 4096);
  int e4m3 = 0, a16w4 = 0, other = 0;
  for (const Strategy& s : strategies()) {
    if (s.family->id != FamilyId::hopper || s.schedule != Schedule::persistent) continue;
    SCOPED_TRACE(s.name);
    const bool all_fp8 = s.recipe.kv == problem::KvFormat::fp8 && s.recipe.p == problem::PFormat::fp8;
    const bool mxfp4_bf16_p = s.recipe.kv == problem::KvFormat::mxfp4 && s.recipe.p == problem::PFormat::bf16;
    (all_fp8 ? e4m3 : mxfp4_bf16_p ? a16w4 : other) += 1;
    const problem::SplitPlan plan = s.emulated_plan(batch, 132);
    ASSERT_TRUE(plan.is_balanced());
    EXPECT_EQ(plan.overhead_units, all_fp8 ? 6 : mxfp4_bf16_p ? 3 : 4);
    Strategy swept = s;
    swept.tunables.balanced_overhead = 2;
    EXPECT_EQ(swept.emulated_plan(batch, 132).overhead_units, 2);
  }
  EXPECT_EQ(e4m3, 3) << "a8w8, a8w8-static, a8w8-cast";
  EXPECT_EQ(a16w4, 1) << "a16w4";
  EXPECT_GE(other, 3) << "a16w16, a16w8, a4w4";
}

TEST(GpuRegistry, LaunchWithoutARuntimeSaysSo) {
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  GTEST_SKIP() << "this build has a GPU runtime";
#else
  EXPECT_THROW(strategies().front().launch(DecodeParams{}, nullptr), std::runtime_error);
  const auto why = not_built_here(family(FamilyId::mma));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("built without a GPU runtime"), std::string::npos) << *why;
#endif
}

TEST(GpuRegistry, GlobSelectsByName) {
  EXPECT_TRUE(glob_match("*", "a8w8/split-k/portable"));
  EXPECT_TRUE(glob_match("a8w8/*", "a8w8/split-k/portable"));
  EXPECT_FALSE(glob_match("a8w8/*", "a8w8-cast/split-k/portable"));
  EXPECT_TRUE(glob_match("*/split-k/*", "a4w4/split-k/portable"));
  EXPECT_TRUE(glob_match("a?w?/*", "a4w4/single-pass/portable"));
  EXPECT_FALSE(glob_match("a?w?/*", "a16w4/single-pass/portable"));
  EXPECT_TRUE(glob_match("**", ""));
  EXPECT_FALSE(glob_match("", "x"));
  EXPECT_EQ(match_strategies("*").size(), strategies().size());
  EXPECT_EQ(match_strategies("*/single-pass/*").size(), problem::recipes().size());
  // Several globs, comma-separated: the union in table order, each entry once.
  const auto a16 = match_strategies("a16w16/*"), a8 = match_strategies("a8w8/*");
  const auto both = match_strategies("a8w8/*,a16w16/*");
  ASSERT_EQ(both.size(), a16.size() + a8.size());
  EXPECT_EQ(both.front(), a16.front());  // table order, not the order of the globs
  EXPECT_EQ(match_strategies("a16w16/*,*").size(), strategies().size());
  EXPECT_TRUE(match_strategies("nothing/*,").empty());  // an empty glob matches no name
  EXPECT_TRUE(match_strategies("nothing*").empty());
}

TEST(GpuWorkspace, RegionsFitAndDoNotOverlap) {
  for (const Strategy& s : strategies()) {
    for (const int64_t tokens : {1, 7, 256}) {
      const problem::Batch batch = problem::Batch::uniform(static_cast<int32_t>(tokens), 10);
      const problem::SplitPlan plan = s.emulated_plan(batch, kPlanningMultiprocessorsWithoutGpu);
      // (token, split) rows: T x max_splits, a balanced plan's T + 4 (blocks - 1) (split_plan.h).
      const auto partial_rows = static_cast<std::size_t>(
          plan.split_k() ? (plan.is_balanced() ? tokens + problem::kMaxQSeqLen * (plan.balanced_blocks - 1)
                                               : tokens * plan.max_splits(batch.max_kv_len()))
                         : 0);
      const WorkspaceLayout w =
          workspace_layout(s.recipe, plan, tokens, batch.num_requests(), batch.max_kv_len());
      const std::size_t rows = static_cast<std::size_t>(tokens) * 16;
      struct Region {
        std::size_t at, bytes;
      };
      std::vector<Region> regions;
      const auto add = [&](std::size_t at, std::size_t bytes) {
        if (at == WorkspaceLayout::kAbsent) return;
        EXPECT_EQ(at % WorkspaceLayout::kAlignment, 0u) << s.name;
        EXPECT_LE(at + bytes, w.bytes) << s.name;
        for (const Region& r : regions)
          EXPECT_TRUE(at + bytes <= r.at || r.at + r.bytes <= at) << s.name;
        regions.push_back({at, bytes});
      };
      const bool mx = s.recipe.q == problem::QFormat::mxfp4_dynamic;
      add(w.q_codes, rows * (mx ? 288 : 576));
      add(w.q_block_scales, rows * 18);
      add(w.q_scale, 4);
      add(w.amax, 4 * 256);
      add(w.part_o, partial_rows * 16 * 512 * 4);
      add(w.part_lse, partial_rows * 16 * 4);
      EXPECT_EQ(w.q_codes == WorkspaceLayout::kAbsent, s.recipe.q == problem::QFormat::bf16);
      add(w.item_start, (static_cast<std::size_t>(tokens) + 1) * 4);
      add(w.part_start, (static_cast<std::size_t>(tokens) + 1) * 8);
      EXPECT_EQ(w.part_o == WorkspaceLayout::kAbsent, !plan.split_k());
      add(w.block_head, static_cast<std::size_t>(plan.balanced_blocks) * sizeof(common::ResolvedItem));
      add(w.item_resolved, (static_cast<std::size_t>(tokens) + plan.balanced_blocks) * sizeof(common::ResolvedItem));
      EXPECT_EQ(w.item_start == WorkspaceLayout::kAbsent, plan.chunk_keys == 0 && !plan.is_balanced());
      EXPECT_EQ(w.block_head == WorkspaceLayout::kAbsent, !plan.is_balanced());
      EXPECT_EQ(w.item_resolved == WorkspaceLayout::kAbsent, !plan.is_balanced());
      EXPECT_EQ(s.workspace_bytes(batch, kPlanningMultiprocessorsWithoutGpu), w.bytes);
    }
  }
}

}  // namespace
}  // namespace mlacheck::gpu
