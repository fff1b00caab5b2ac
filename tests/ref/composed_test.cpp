// Composed recipes (problem/recipe.h parse_recipe), declared schedules (problem/schedule.h) and
// what the emulated reference does with them (ref/decode_emulated.h EmulationOptions): each
// schedule kind against another spelling of the same cut (a balanced plan against a table of the
// cuts found by walking its cost axis; its cuts on a hand-worked batch), folded KV scales against
// the codecs, request subsets, captured partials, the exact stages of drift's waterfall, the
// sensitivity sums.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "problem/error.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/fp8.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"
#include "ref/emulated_inputs.h"
#include "ref/fp8_mma.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "ref/round_to.h"
#include "test_support.h"
#include "tests/support/balanced_walk.h"

namespace mlacheck::ref {
namespace {

using problem::parse_recipe;
using problem::parse_schedule;
using problem::Schedule;
constexpr int H = problem::kNumHeads, DV = problem::kVDim;

TEST(ComposedRecipe, PresetAloneIsThePreset) {
  for (const problem::Recipe& r : problem::recipes()) {
    const problem::Recipe p = parse_recipe(r.name);
    EXPECT_TRUE(problem::same_numerics(p, r)) << r.name;
    EXPECT_EQ(problem::spell(p), r.name);
  }
}

TEST(ComposedRecipe, OverridesSetFieldsAndSpellBack) {
  const problem::Recipe r = parse_recipe("a16w8:p=fp8,base=2,kv-scale=fold-f16,partial=bf16");
  EXPECT_EQ(r.name, "a16w8");
  EXPECT_EQ(r.p, problem::PFormat::fp8);
  EXPECT_EQ(r.base, problem::SoftmaxBase::two);
  EXPECT_EQ(r.kv_scale, problem::KvScale::fold_f16);
  EXPECT_EQ(r.partial, problem::PartialFormat::bf16);
  EXPECT_EQ(r.num_splits, problem::find_recipe("a16w8")->num_splits);  // schedule untouched
  EXPECT_EQ(problem::spell(r), "a16w8:p=fp8,base=2,kv-scale=fold-f16,partial=bf16");
  EXPECT_TRUE(problem::same_numerics(parse_recipe(problem::spell(r)), r));
  EXPECT_FALSE(problem::same_numerics(r, *problem::find_recipe("a16w8")));
  // An override equal to the preset's value is no override.
  EXPECT_EQ(problem::spell(parse_recipe("a16w16:p=bf16")), "a16w16");
  // q=fp8-static takes seed 004's absmax.
  EXPECT_GT(parse_recipe("a16w8:q=fp8-static").q_static_absmax, 0);
}

TEST(ComposedRecipe, BadSpellingsNameWhatIsWrong) {
  const auto message = [](const char* s) {
    try {
      (void)parse_recipe(s);
    } catch (const problem::ProblemError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("a2w2").find("presets: a16w16"), std::string::npos);
  EXPECT_NE(message("a16w16:").find("nothing after"), std::string::npos);
  EXPECT_NE(message("a16w16:p").find("not FIELD=VALUE"), std::string::npos);
  EXPECT_NE(message("a16w16:p=").find("not FIELD=VALUE"), std::string::npos);
  EXPECT_NE(message("a16w16:x=1").find("fields: q, kv, p"), std::string::npos);
  EXPECT_NE(message("a16w16:p=fp4").find("f32|bf16|f16|fp8"), std::string::npos);
  EXPECT_NE(message("a16w16:p=f16,").find("trailing"), std::string::npos);
  EXPECT_NE(message("a16w16:kv-scale=fold-f16").find("needs a quantized cache"), std::string::npos);
  // The tensor core's fp8 sums need fp8 x fp8 products somewhere.
  EXPECT_NE(message("a16w16:fp8-acc=tc64").find("needs fp8 x fp8 products"), std::string::npos);
  EXPECT_NE(message("a8w8:kv-scale=fold-bf16,p=bf16,fp8-acc=tc64").find("needs fp8 x fp8"),
            std::string::npos);
  EXPECT_NE(message("a8w8:fp8-acc=tc32").find("f32|tc64|tc"), std::string::npos);
}

TEST(ComposedRecipe, Fp8AccumulationFieldSpellsBackAndNamesItsProducts) {
  const problem::Recipe r = parse_recipe("a8w8:fp8-acc=tc64");
  EXPECT_EQ(r.fp8_acc, problem::Fp8Accumulation::tc64);
  EXPECT_EQ(problem::spell(r), "a8w8:fp8-acc=tc64");
  EXPECT_FALSE(problem::same_numerics(r, *problem::find_recipe("a8w8")));
  EXPECT_TRUE(problem::fp8_products_qk(r) && problem::fp8_products_pv(r));
  const problem::Recipe pv_only = parse_recipe("a16w8:p=fp8,fp8-acc=tc64");  // bf16 Q: P·V only
  EXPECT_FALSE(problem::fp8_products_qk(pv_only));
  EXPECT_TRUE(problem::fp8_products_pv(pv_only));
  EXPECT_FALSE(problem::fp8_products_pv(parse_recipe("a8w8:p=bf16")));
}

TEST(DeclaredSchedule, ParsesEveryKindAndPrintsItBack) {
  for (const char* s : {"single", "splits=16", "split-len=512", "chunk=256", "splits=3,tile=64",
                        "single,tile=32"})
    EXPECT_EQ(problem::to_string(parse_schedule(s)), s);
  EXPECT_EQ(parse_schedule("tile=64,splits=4"), Schedule::uniform(4, 64));
  for (const char* bad : {"", "splits=0", "splits=257", "splits=x", "tile=0", "splits=2,single",
                          "fast", "split-len=-1", "table="})
    EXPECT_THROW((void)parse_schedule(bad), problem::ProblemError) << bad;
}

TEST(DeclaredSchedule, RangesOfEachKind) {
  const auto cut = [](const char* s, int64_t len) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const problem::KeyRange& r : parse_schedule(s).ranges(0, len)) out.emplace_back(r.begin, r.end);
    return out;
  };
  using V = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(cut("single", 10), (V{{0, 10}}));
  EXPECT_EQ(cut("splits=3", 10), (V{{0, 4}, {4, 8}, {8, 10}}));
  EXPECT_EQ(cut("splits=4", 2), (V{{0, 1}, {1, 2}, {2, 2}, {2, 2}}));
  EXPECT_EQ(cut("split-len=4", 10), (V{{0, 4}, {4, 8}, {8, 10}}));
  EXPECT_EQ(cut("split-len=4", 0), (V{{0, 0}}));
  EXPECT_EQ(cut("chunk=4", 10), (V{{0, 4}, {4, 8}, {8, 10}}));
}

std::filesystem::path write_table(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

TEST(DeclaredSchedule, TableFileGivesPerRequestBoundaries) {
  const auto path = write_table("mlacheck_table_ok.txt", "# FlashMLA-like\n0 5 9\n\n0\n0 2 # two\n");
  const Schedule s = parse_schedule("table=" + path.string() + ",tile=2");
  ASSERT_EQ(s.table.size(), 3u);
  EXPECT_EQ(s.softmax_tile, 2);
  EXPECT_EQ(s.ranges(0, 12).size(), 3u);
  EXPECT_EQ(s.ranges(0, 12)[2].end, 12);
  EXPECT_EQ(s.ranges(1, 0).size(), 1u);
  const std::vector<int32_t> fits{0, 12, 12, 15};
  EXPECT_NO_THROW(s.check_fits(fits));
  const std::vector<int32_t> too_short{0, 12, 12, 13};  // request 2 has 1 key, a split at key 2
  EXPECT_THROW(s.check_fits(too_short), problem::ProblemError);
  const std::vector<int32_t> other_count{0, 12, 12};
  EXPECT_THROW(s.check_fits(other_count), problem::ProblemError);
  for (const char* bad : {"0 5 5\n", "1 5\n", "0 x\n", "# nothing\n"}) {
    const auto p = write_table("mlacheck_table_bad.txt", bad);
    EXPECT_THROW((void)parse_schedule("table=" + p.string()), problem::ProblemError) << bad;
  }
  EXPECT_THROW((void)parse_schedule("table=/nonexistent/table.txt"), problem::ProblemError);
  EXPECT_THROW((void)parse_schedule("table=/tmp"), problem::ProblemError);  // not a regular file
}

TEST(DeclaredSchedule, BalancedParsesAndPrintsBack) {
  const Schedule s = parse_schedule("balanced=132/64/2,tile=64");
  EXPECT_EQ(s, Schedule::balanced(132, 64, 2, 64));
  EXPECT_EQ(problem::to_string(s), "balanced=132/64/2,tile=64");
  EXPECT_EQ(parse_schedule(problem::to_string(s)), s);
  EXPECT_EQ(problem::to_string(parse_schedule("tile=16,balanced=1/1/0")), "balanced=1/1/0,tile=16");
  EXPECT_EQ(Schedule::from_plan(problem::SplitPlan::balanced_over(132, 64, 2), 64), s);
  const auto message = [](const char* spelling) {
    try {
      (void)parse_schedule(spelling);
    } catch (const problem::ProblemError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("balanced=0/64/2").find("not an integer in 1 .. 256"), std::string::npos);
  EXPECT_NE(message("balanced=257/64/2").find("not an integer in 1 .. 256"), std::string::npos);
  EXPECT_NE(message("balanced=132/64").find("BLOCKS/UNIT/OVERHEAD"), std::string::npos);
  EXPECT_NE(message("balanced=132/64/2/1").find("BLOCKS/UNIT/OVERHEAD"), std::string::npos);
  EXPECT_NE(message("balanced=").find("BLOCKS/UNIT/OVERHEAD"), std::string::npos);
  EXPECT_NE(message("balanced=132/0/2").find("'0' is not an integer in 1 .."), std::string::npos);
  EXPECT_NE(message("balanced=132/64/-1").find("'-1' is not an integer in 0 .."), std::string::npos);
  EXPECT_NE(message("balanced=x/64/2").find("'x' is not an integer"), std::string::npos);
  EXPECT_NE(message("balanced=4/64/2,splits=3").find("more than one split kind"), std::string::npos);
  // Its ranges need the batch: Schedule::ranges refuses, BatchSplits answers.
  EXPECT_THROW((void)s.ranges(0, 100), problem::ProblemError);
}

using Cuts = std::vector<std::pair<int64_t, int64_t>>;
Cuts cuts_of(const problem::BatchSplits& splits, int64_t b) {
  Cuts out;
  for (const problem::KeyRange& r : splits.ranges(b)) out.emplace_back(r.begin, r.end);
  return out;
}

// Lengths 300, 0, 1000 keys, 64 keys a unit, 2 units of overhead: T = 5, 0, 16 units;
// A_0 = 2, A_1 = 2·2 + 5 = 9, A_2 = 3·2 + 5 + 0 = 11; total cost 3·2 + 21 = 27.
TEST(DeclaredSchedule, BalancedCutsOfAHandWorkedBatch) {
  const std::vector<int32_t> indptr{0, 300, 300, 1300};
  // 4 blocks: Q = max(ceil(27 / 4), 2 + 1) = 7, shares [0,7) [7,14) [14,21) [21,27).
  // Request 0's units [2, 7): no multiple of 7 strictly inside, one piece. Request 1: one empty
  // piece (its overhead [7, 9) in share 1). Request 2's units [11, 27): cuts at 14 and 21, units
  // 3 and 10 of it: keys [0, 192), [192, 640), [640, 1000).
  const Schedule four = Schedule::balanced(4, 64, 2);
  const problem::BatchSplits s4(four, indptr);
  EXPECT_EQ(cuts_of(s4, 0), (Cuts{{0, 300}}));
  EXPECT_EQ(cuts_of(s4, 1), (Cuts{{0, 0}}));
  EXPECT_EQ(cuts_of(s4, 2), (Cuts{{0, 192}, {192, 640}, {640, 1000}}));
  EXPECT_EQ(s4.max_ranges(), 3);
  EXPECT_EQ(four.max_ranges(3, 1000), 4);  // min(4 blocks, 16 units): the batch-free bound
  // Fewer requests than blocks, so the one-piece cut is weighed (split_plan.h balanced::one_piece):
  // 21 units in pieces of P = 6 make 1 + 1 + 3 = 5 pieces, of 7 still 5, of 8 make 4 <= 4 blocks;
  // P = 8 > Q = 7, so not taken: the equal cut above.
  // 8 blocks: Q = max(ceil(27 / 8), 3) = 4; one-piece: P = 3 makes 2 + 1 + 6 = 9 pieces, P = 4 makes
  // 2 + 1 + 4 = 7 <= 8, and 4 <= Q: taken. Request 0's 5 units in 2 pieces of 3 (keys [0, 192),
  // [192, 300)), request 2's 16 in 4 of 4; pieces 0 .. 6 on blocks 0 .. 6 (block 7 idle).
  const Schedule eight = Schedule::balanced(8, 64, 2);
  const problem::BatchSplits s8(eight, indptr);
  EXPECT_EQ(cuts_of(s8, 0), (Cuts{{0, 192}, {192, 300}}));
  EXPECT_EQ(cuts_of(s8, 1), (Cuts{{0, 0}}));
  EXPECT_EQ(cuts_of(s8, 2), (Cuts{{0, 256}, {256, 512}, {512, 768}, {768, 1000}}));
  EXPECT_EQ(s8.max_ranges(), 4);
  // The equal cut's arithmetic at Q = 4 (what 8 blocks would give without the one-piece cut): request
  // 0's units [2, 7) cut at 4, request 2's [11, 27) at 12, 16, 20, 24; their blocks
  // (balanced::piece_block): 0, 1 | 1 | 2, 3, 4, 5, 6.
  EXPECT_EQ(problem::balanced::piece_block(2, 5, 1, 4, 2), 1);
  EXPECT_EQ(problem::balanced::piece_block(9, 0, 0, 4, 2), 1);
  EXPECT_EQ(problem::balanced::piece_block(11, 16, 4, 4, 2), 6);
  // Other kinds answer through BatchSplits as through Schedule::ranges.
  const Schedule three = Schedule::uniform(3);
  EXPECT_EQ(cuts_of(problem::BatchSplits(three, indptr), 2), (Cuts{{0, 334}, {334, 668}, {668, 1000}}));
  EXPECT_THROW((void)s4.ranges(3), problem::ProblemError);
  const Schedule bad = Schedule::balanced(4, 0, 2);
  EXPECT_THROW(problem::BatchSplits(bad, indptr), problem::ProblemError);
}

struct Case {
  Inputs in;
  KvCaches caches;
  explicit Case(CaseSpec spec) : in(generate(spec)), caches(in.kv, in.batch.cache_rows()) {}
  problem::KvCache cache(const problem::Recipe& r) {
    problem::KvCache c = caches.for_recipe(r);
    c.bf16 = in.kv;  // what drift's exact stages read
    return c;
  }
};

CaseSpec ragged_case() {
  CaseSpec c = test::small_case(7, 150, 21);
  c.ragged = true;
  c.q_len = 2;
  c.page_size = 16;
  c.shuffle_pages = true;
  return c;
}

// The same cut spelled three ways gives the same bits; the uniform int overload is splits=N.
TEST(DeclaredSchedule, EquivalentSpellingsEmulateTheSameBits) {
  Case c(ragged_case());
  const problem::Batch& b = c.in.batch;
  for (const problem::Recipe& r : problem::recipes()) {
    SCOPED_TRACE(r.name);
    problem::Recipe untiled = r;
    untiled.softmax_tile = 0;
    const problem::KvCache cache = c.cache(r);
    const EmulatedResult by_int = decode_emulated(b, c.in.q, cache, untiled, 5);
    const EmulatedResult by_schedule = decode_emulated(b, c.in.q, cache, r, Schedule::uniform(5));
    ASSERT_TRUE(test::same_bits(by_int.out, by_schedule.out));
    // splits=5 as a table of its own boundaries.
    std::string table;
    for (int64_t q = 0; q < b.num_requests(); ++q) {
      for (const problem::KeyRange& k : Schedule::uniform(5).ranges(q, b.kv_len(q)))
        if (k.begin < k.end || k.begin == 0) table += std::to_string(k.begin) + " ";
      table += "\n";
    }
    const auto path = write_table("mlacheck_table_eq.txt", table);
    const EmulatedResult by_table =
        decode_emulated(b, c.in.q, cache, r, parse_schedule("table=" + path.string()));
    ASSERT_TRUE(test::same_bits(by_int.out, by_table.out));
    ASSERT_TRUE(test::same_bits(by_int.lse, by_table.lse));
  }
}

// A balanced plan emulates the same bits as a table of its cuts, the cuts found by walking the cost
// axis unit by unit (tests/support/balanced_walk.h, not BatchSplits).
TEST(DeclaredSchedule, BalancedPlanEmulatesTheSameBitsAsATableOfItsCuts) {
  Case c(ragged_case());
  const problem::Batch& b = c.in.batch;
  constexpr int kBlocks = 12, kUnit = 16, kOverhead = 2;
  std::vector<int64_t> lengths;
  for (int64_t q = 0; q < b.num_requests(); ++q) lengths.push_back(b.kv_len(q));
  const testing::BalancedWalk walk = testing::walk_balanced(lengths, kBlocks, kUnit, kOverhead);
  std::string table;
  int64_t cuts = 0;
  for (const std::vector<int64_t>& firsts : walk.piece_first) {
    for (std::size_t s = 0; s < firsts.size(); ++s) table += (s > 0 ? " " : "") + std::to_string(firsts[s]);
    table += "\n";
    cuts += static_cast<int64_t>(firsts.size()) - 1;
  }
  ASSERT_GT(cuts, 2) << table;  // the batch is cut somewhere, or this checks little
  const auto path = write_table("mlacheck_table_balanced.txt", table);
  const problem::SplitPlan plan = problem::SplitPlan::balanced_over(kBlocks, kUnit, kOverhead);
  for (const char* name : {"a16w16", "a8w8", "a4w4"}) {
    SCOPED_TRACE(name);
    const problem::Recipe r = *problem::find_recipe(name);
    const problem::KvCache cache = c.cache(r);
    const EmulatedResult by_plan = decode_emulated(b, c.in.q, cache, r, plan);
    std::string spelling = "table=" + path.string();
    if (r.softmax_tile > 0) spelling += ",tile=" + std::to_string(r.softmax_tile);
    EmulationOptions o;
    o.capture_partials = true;
    const EmulatedResult by_table = decode_emulated(b, c.in.q, cache, r, parse_schedule(spelling), o);
    ASSERT_TRUE(test::same_bits(by_plan.out, by_table.out));
    ASSERT_TRUE(test::same_bits(by_plan.lse, by_table.lse));
    // The partials too, S being the most pieces of a request either way.
    const EmulatedResult by_schedule =
        decode_emulated(b, c.in.q, cache, r, Schedule::from_plan(plan, r.softmax_tile), o);
    ASSERT_EQ(by_schedule.partial_splits, by_table.partial_splits);
    ASSERT_TRUE(test::same_bits(by_schedule.partial_out, by_table.partial_out));
    ASSERT_TRUE(test::same_bits(by_schedule.partial_lse, by_table.partial_lse));
  }
  const problem::Recipe r = *problem::find_recipe("a16w16");
  for (const problem::SplitPlan bad : {problem::SplitPlan::balanced_over(257, 16, 2),
                                       problem::SplitPlan::balanced_over(4, 0, 2),
                                       problem::SplitPlan::balanced_over(4, 16, -1)})
    EXPECT_THROW((void)decode_emulated(b, c.in.q, c.cache(r), r, bad), problem::ProblemError);
}

// kv-scale=fold-*: the product sees fmt(code x scale), and no scale is left for the output; with
// one key the output is that V row itself.
TEST(ComposedRecipe, FoldedScaleGivesTheRoundedDequantizedRow) {
  Case c(test::small_case(2, 1, 8));
  for (const char* spelling : {"a16w8:kv-scale=fold-f16,p=f16", "a8w8:kv-scale=fold-bf16,p=bf16"}) {
    SCOPED_TRACE(spelling);
    const problem::Recipe r = parse_recipe(spelling);
    const problem::KvCache cache = c.cache(r);
    const EmulatedResult e = decode_emulated(c.in.batch, c.in.q, cache, r, Schedule::single());
    for (int64_t b = 0; b < 2; ++b)
      for (int d = 0; d < DV; ++d) {
        const float x = quant::fp8_to_f32(cache.fp8[b * problem::kQkDim + d], cache.fp8_format) *
                        cache.fp8_scale;
        const float folded = r.kv_scale == problem::KvScale::fold_f16 ? round_to_f16(x) : round_to_bf16(x);
        ASSERT_EQ(quant::bf16_to_f32(e.out[b * H * DV + d]),
                  quant::bf16_to_f32(quant::f32_to_bf16(folded)))
            << b << " " << d;
      }
  }
}

// fp8-acc=tc64 / tc: with one key per request the LSE is the score itself, so it shows Q·Kᵀ as the
// emulation sums it: the codes' products through ref/fp8_mma.h's model, in runs of 64 dims whose
// sums are added in float32 in order (tc64) or all 576 in one accumulator (tc), times the recipe's
// score scale. On peaked data (large products) the model's cut moves some scores away from the
// float32 sums, and the two ways apart.
TEST(ComposedRecipe, TensorCoreAccumulationSumsQkInRunsOrWhole) {
  Case c(test::small_case(3, 1, 17, Profile::peaked));
  const problem::Recipe f32 = parse_recipe("a8w8");
  const problem::KvCache cache = c.cache(f32);
  const EmulatedResult plain = decode_emulated(c.in.batch, c.in.q, cache, f32, Schedule::single());
  std::vector<float> lse_of_tc64;
  for (const char* spelling : {"a8w8:fp8-acc=tc64", "a8w8:fp8-acc=tc"}) {
    SCOPED_TRACE(spelling);
    const problem::Recipe tc = parse_recipe(spelling);
    const bool promoted = tc.fp8_acc == problem::Fp8Accumulation::tc64;
    const EmulatedResult e = decode_emulated(c.in.batch, c.in.q, cache, tc, Schedule::single());
    const EmulatedQ q = quantize_q(c.in.q, tc);
    const KvDecoder kv(cache, tc);
    const float scale = emulated_scales(tc, q, kv).score;
    int moved = 0, apart = 0;
    for (int64_t b = 0; b < 3; ++b) {
      float k[problem::kQkDim];
      kv.row(b, k);
      for (int h = 0; h < H; ++h) {
        const float* qh = &q.values[static_cast<std::size_t>((b * H + h) * problem::kQkDim)];
        float sum = 0.0f;
        if (promoted) {
          for (int d0 = 0; d0 < problem::kQkDim; d0 += problem::kTensorCoreRun)
            sum += fp8_mma_accumulate(0.0f, qh + d0, k + d0, problem::kTensorCoreRun, kSm90Fp8Mma);
        } else {
          sum = fp8_mma_accumulate(0.0f, qh, k, problem::kQkDim, kSm90Fp8Mma);
        }
        const std::size_t i = static_cast<std::size_t>(b * H + h);
        ASSERT_EQ(e.lse[i], sum * scale) << b << " " << h;
        moved += e.lse[i] != plain.lse[i];
        if (promoted) lse_of_tc64.push_back(e.lse[i]);
        else apart += e.lse[i] != lse_of_tc64[i];
      }
    }
    EXPECT_GT(moved, 0) << "no score moved: the model is not in effect";
    if (!promoted) {
      EXPECT_GT(apart, 0) << "tc and tc64 gave the same scores";
    }
  }
}

// The tensor core's model is of e4m3fn codes (its subnormals align at e4m3fn's smallest exponent):
// the emulation refuses it for an e4m3fnuz recipe, and runs the same recipe's float32 sums.
TEST(ComposedRecipe, TensorCoreSumsRefuseE4m3fnuz) {
  Case c(test::small_case(2, 1, 9, Profile::harness));
  problem::Recipe fnuz = parse_recipe("a8w8:fp8-acc=tc64");
  fnuz.fp8 = quant::Fp8Format::e4m3fnuz;
  const problem::KvCache cache = c.cache(fnuz);
  try {
    (void)decode_emulated(c.in.batch, c.in.q, cache, fnuz, Schedule::single());
    ADD_FAILURE() << "an e4m3fnuz recipe ran the e4m3fn tensor core's model";
  } catch (const problem::ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("e4m3fnuz"), std::string::npos) << e.what();
  }
  fnuz.fp8_acc = problem::Fp8Accumulation::f32;
  EXPECT_NO_THROW((void)decode_emulated(c.in.batch, c.in.q, cache, fnuz, Schedule::single()));
}

// EmulationOptions::tc_qk_order: K step s of each 64-dim run takes the dims the order puts at
// positions 32 s .. 32 s + 31 (here every other group of 8, an interleave a kernel's operand layout
// may make), which moves some scores; a list that is not a permutation of 0 .. 63 is refused.
TEST(ComposedRecipe, TensorCoreOrderDecidesWhichDimsShareAStep) {
  Case c(test::small_case(3, 1, 17, Profile::peaked));
  const problem::Recipe tc = parse_recipe("a8w8:fp8-acc=tc64");
  const problem::KvCache cache = c.cache(tc);
  std::vector<int> order(problem::kTensorCoreRun);
  for (int p = 0; p < problem::kTensorCoreRun; ++p)  // position p: step h, column q
    order[static_cast<std::size_t>(p)] = 16 * (p % 32 / 8) + 8 * (p / 32) + p % 8;
  EmulationOptions o;
  o.tc_qk_order = order;
  const EmulatedResult e = decode_emulated(c.in.batch, c.in.q, cache, tc, Schedule::single(), o);
  const EmulatedResult in_order = decode_emulated(c.in.batch, c.in.q, cache, tc, Schedule::single());
  const EmulatedQ q = quantize_q(c.in.q, tc);
  const KvDecoder kv(cache, tc);
  const float scale = emulated_scales(tc, q, kv).score;
  int moved = 0;
  for (int64_t b = 0; b < 3; ++b) {
    float k[problem::kQkDim];
    kv.row(b, k);
    for (int h = 0; h < H; ++h) {
      float sum = 0.0f;
      for (int d0 = 0; d0 < problem::kQkDim; d0 += problem::kTensorCoreRun) {
        float qs[problem::kTensorCoreRun], ks[problem::kTensorCoreRun];
        for (int p = 0; p < problem::kTensorCoreRun; ++p) {
          const int d = d0 + order[static_cast<std::size_t>(p)];
          qs[p] = q.values[static_cast<std::size_t>((b * H + h) * problem::kQkDim + d)];
          ks[p] = k[d];
        }
        sum += fp8_mma_accumulate(0.0f, qs, ks, problem::kTensorCoreRun, kSm90Fp8Mma);
      }
      ASSERT_EQ(e.lse[b * H + h], sum * scale) << b << " " << h;
      moved += e.lse[b * H + h] != in_order.lse[b * H + h];
    }
  }
  EXPECT_GT(moved, 0) << "the interleave moved no score: the order is not in effect";
  std::vector<int> twice(order);
  twice[5] = twice[6];
  for (const std::vector<int>& bad : {twice, std::vector<int>(63, 0)}) {
    o.tc_qk_order = bad;
    EXPECT_THROW((void)decode_emulated(c.in.batch, c.in.q, cache, tc, Schedule::single(), o),
                 problem::ProblemError);
  }
}

TEST(EmulationOptions, RequestSubsetEqualsTheWholeRunThere) {
  Case c(ragged_case());
  const problem::Recipe r = parse_recipe("a16w4");
  const problem::KvCache cache = c.cache(r);
  const EmulatedResult all = decode_emulated(c.in.batch, c.in.q, cache, r, Schedule::uniform(3, 32));
  EmulationOptions o;
  const std::vector<int64_t> some{5, 2};
  o.requests = some;
  const EmulatedResult part =
      decode_emulated(c.in.batch, c.in.q, cache, r, Schedule::uniform(3, 32), o);
  const problem::Batch& b = c.in.batch;
  for (int64_t q = 0; q < b.num_requests(); ++q)
    for (int64_t t = b.qo_indptr()[q]; t < b.qo_indptr()[q + 1]; ++t)
      for (int h = 0; h < H; ++h) {
        const bool chosen = q == 5 || q == 2;
        ASSERT_EQ(part.lse[t * H + h], chosen ? all.lse[t * H + h] : -INFINITY) << q;
        for (int d = 0; d < DV; d += 37)
          ASSERT_EQ(part.out[(t * H + h) * DV + d], chosen ? all.out[(t * H + h) * DV + d] : 0);
      }
  const std::vector<int64_t> outside{7};
  o.requests = outside;
  EXPECT_THROW((void)decode_emulated(b, c.in.q, cache, r, Schedule::single(), o),
               problem::ProblemError);
}

// The captured partials merged again (in double) give the output; a single pass's only partial
// is the float32 output.
TEST(EmulationOptions, CapturedPartialsMergeToTheOutput) {
  Case c(ragged_case());
  const problem::Batch& b = c.in.batch;
  for (const char* spelling : {"a16w16", "a8w8-cast", "a4w4"}) {
    SCOPED_TRACE(spelling);
    const problem::Recipe r = parse_recipe(spelling);
    EmulationOptions o;
    o.capture_partials = true;
    o.keep_f32_output = true;
    const EmulatedResult e = decode_emulated(b, c.in.q, c.cache(r), r, Schedule::uniform(4, 16), o);
    ASSERT_EQ(e.partial_splits, 4);
    for (int64_t t = 0; t < b.total_q(); ++t)
      for (int h = 0; h < H; ++h) {
        double big = -INFINITY;
        for (int s = 0; s < 4; ++s) big = std::max<double>(big, e.partial_lse[(t * 4 + s) * H + h]);
        if (big == -INFINITY) continue;
        double w_sum = 0;
        std::vector<double> acc(DV, 0.0), size(DV, 0.0);
        for (int s = 0; s < 4; ++s) {
          const double w = std::exp(e.partial_lse[(t * 4 + s) * H + h] - big);
          w_sum += w;
          for (int d = 0; d < DV; ++d) {
            const double x = e.partial_out[((t * 4 + s) * H + h) * DV + d];
            acc[d] += w * x;
            size[d] += w * std::fabs(x);
          }
        }
        // float32 merge vs double: a few float32 ulps of the terms' sizes
        for (int d = 0; d < DV; ++d) {
          const double want = acc[d] / w_sum, got = e.out_f32[(t * H + h) * DV + d];
          ASSERT_NEAR(got, want, 1e-6 * size[d] / w_sum + 1e-30) << t << " " << h << " " << d;
        }
      }
    const EmulatedResult single = decode_emulated(b, c.in.q, c.cache(r), r, Schedule::single(), o);
    ASSERT_EQ(single.partial_splits, 1);
    ASSERT_TRUE(test::same_bits(single.partial_out, single.out_f32));
  }
}

// Every rounding made exact: the emulation is the exact output up to float32 noise.
TEST(EmulationOptions, AllStagesExactGiveTheExactOutput) {
  Case c(ragged_case());
  const problem::Batch& b = c.in.batch;
  const ExactResult exact = decode_exact(b, c.in.q, c.in.kv);
  for (const char* spelling : {"a8w8:p=f32", "a4w4:p=f32", "a16w8:p=f32,kv-scale=fold-f16"}) {
    SCOPED_TRACE(spelling);
    const problem::Recipe r = parse_recipe(spelling);
    EmulationOptions o;
    o.exact_q = o.exact_k = o.exact_v = o.keep_f32_output = true;
    const EmulatedResult e = decode_emulated(b, c.in.q, c.cache(r), r, Schedule::uniform(3), o);
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < exact.out.size(); ++i) {
      err += std::pow(double(e.out_f32[i]) - exact.out[i], 2);
      ref += std::pow(double(exact.out[i]), 2);
    }
    EXPECT_LT(std::sqrt(err / ref), 1e-5);
    // and with the recipe's quantization left in, it is not
    const EmulatedResult q = decode_emulated(b, c.in.q, c.cache(r), r, Schedule::uniform(3));
    double err_q = 0;
    for (std::size_t i = 0; i < exact.out.size(); ++i)
      err_q += std::pow(double(quant::bf16_to_f32(q.out[i])) - exact.out[i], 2);
    EXPECT_GT(std::sqrt(err_q / ref), 1e-3);
  }
}

TEST(EmulationOptions, SensitivityNeedsOneStepAndIsZeroForOneKey) {
  Case c(test::small_case(2, 1, 9));
  const problem::Recipe r = parse_recipe("a16w16");
  EmulationOptions o;
  o.sensitivity = true;
  EXPECT_THROW((void)decode_emulated(c.in.batch, c.in.q, c.cache(r), r, Schedule::uniform(2), o),
               problem::ProblemError);
  EXPECT_THROW((void)decode_emulated(c.in.batch, c.in.q, c.cache(r), r, Schedule::single(16), o),
               problem::ProblemError);
  const EmulatedResult e = decode_emulated(c.in.batch, c.in.q, c.cache(r), r, Schedule::single(), o);
  for (float x : e.pv_spread) ASSERT_EQ(x, 0.0f);  // the only key is the max: P = 1 everywhere
  for (float x : e.score_range) ASSERT_EQ(x, 0.0f);
}

}  // namespace
}  // namespace mlacheck::ref
