// The emulated mode (ref/decode_emulated.h): bit-for-bit agreement with a plain-loop reading of
// its documented steps, for every recipe; split-K properties; layout and thread invariance.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "naive_decode.h"
#include "problem/error.h"
#include "problem/recipe.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"
#include "ref/emulated_inputs.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "ref/round_to.h"
#include "test_support.h"

namespace mlacheck::ref {
namespace {

using test::seeds;
using test::seed_trace;
constexpr int H = problem::kNumHeads, D = problem::kQkDim, DV = problem::kVDim;

EmulatedResult run(const Inputs& in, KvCaches& caches, const problem::Recipe& r, int splits) {
  return decode_emulated(in.batch, in.q, caches.for_recipe(r), r, splits);
}

// Chunked split plans (problem/split_plan.h: each request its own split count) agree with the
// naive loops bit for bit too, and a chunk that gives every request of a uniform batch the same
// count is the uniform plan.
TEST(RefEmulated, ChunkedPlansEqualPlainLoopsBitForBit) {
  CaseSpec c = test::small_case(6, 90, 11, Profile::harness);
  c.ragged = true;
  c.q_len = 2;
  const Inputs in = generate(c);
  KvCaches caches(in.kv, in.batch.cache_rows());
  for (const problem::Recipe& recipe : problem::recipes())
    for (int chunk : {1, 7, 32, 1000}) {
      SCOPED_TRACE(std::string(recipe.name) + ", chunk " + std::to_string(chunk));
      const EmulatedResult r = decode_emulated(in.batch, in.q, caches.for_recipe(recipe), recipe,
                                               problem::SplitPlan::chunked(chunk));
      const test::NaiveEmulated n =
          test::naive_emulated(in.batch, in.q, caches.for_recipe(recipe), recipe, 0, chunk);
      ASSERT_TRUE(test::same_bits(r.out, n.out));
      ASSERT_TRUE(test::same_bits(r.lse, n.lse));
    }
  CaseSpec u = test::small_case(3, 64, 12, Profile::harness);
  const Inputs uniform = generate(u);
  KvCaches uniform_caches(uniform.kv, uniform.batch.cache_rows());
  const problem::Recipe& r = problem::recipes().front();
  const EmulatedResult chunked = decode_emulated(uniform.batch, uniform.q,
                                                 uniform_caches.for_recipe(r), r,
                                                 problem::SplitPlan::chunked(16));  // 4 each
  const EmulatedResult four = decode_emulated(uniform.batch, uniform.q,
                                              uniform_caches.for_recipe(r), r, 4);
  EXPECT_TRUE(test::same_bits(chunked.out, four.out));
  EXPECT_TRUE(test::same_bits(chunked.lse, four.lse));
}

// Every recipe, no split and the recipe's splits, plus variants of the tile and P format, agree
// with the naive loops bit for bit: the blocking, packing, vectors and threads change nothing.
TEST(RefEmulated, EqualsPlainLoopsBitForBit) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(5, 70, seed, seed == 1 ? Profile::peaked : Profile::harness);
    c.ragged = true;
    c.q_len = 2;
    c.page_size = 8;
    c.shuffle_pages = true;
    const Inputs in = generate(c);
    KvCaches caches(in.kv, in.batch.cache_rows());
    for (const problem::Recipe& recipe : problem::recipes())
      for (int splits : {0, 3, recipe.num_splits}) {
        SCOPED_TRACE(std::string(recipe.name) + ", splits " + std::to_string(splits));
        const EmulatedResult r = run(in, caches, recipe, splits);
        const test::NaiveEmulated n =
            test::naive_emulated(in.batch, in.q, caches.for_recipe(recipe), recipe, splits);
        ASSERT_TRUE(test::same_bits(r.out, n.out));
        ASSERT_TRUE(test::same_bits(r.lse, n.lse));
      }
    // Configurations the table does not use: tile 7 with f32 P and bf16 partials; base 2 + fp8.
    problem::Recipe odd = *problem::find_recipe("a16w8");
    odd.softmax_tile = 7;
    odd.p = problem::PFormat::f32;
    odd.partial = problem::PartialFormat::bf16;
    problem::Recipe odd2 = *problem::find_recipe("a8w8");
    odd2.base = problem::SoftmaxBase::two;
    odd2.softmax_tile = 16;
    odd2.q = problem::QFormat::fp8_dynamic;
    // Q pre-scaled in bf16 (q=bf16-scaled), base e with bf16 P and base 2 with an fp8 cache.
    const problem::Recipe prescaled = problem::parse_recipe("a16w16:q=bf16-scaled");
    const problem::Recipe prescaled2 = problem::parse_recipe("a16w8:q=bf16-scaled,base=2");
    for (const problem::Recipe& recipe : {odd, odd2, prescaled, prescaled2}) {
      const EmulatedResult r = run(in, caches, recipe, 4);
      const test::NaiveEmulated n =
          test::naive_emulated(in.batch, in.q, caches.for_recipe(recipe), recipe, 4);
      ASSERT_TRUE(test::same_bits(r.out, n.out));
      ASSERT_TRUE(test::same_bits(r.lse, n.lse));
    }
  }
}

TEST(RefEmulated, OneSplitEqualsNoSplit) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(6, 200, seed);
    c.ragged = true;
    const Inputs in = generate(c);
    KvCaches caches(in.kv, in.batch.cache_rows());
    for (const problem::Recipe& recipe : problem::recipes()) {
      SCOPED_TRACE(recipe.name);
      const EmulatedResult none = run(in, caches, recipe, 0);
      const EmulatedResult one = run(in, caches, recipe, 1);
      EXPECT_TRUE(test::same_bits(none.out, one.out));
      EXPECT_TRUE(test::same_bits(none.lse, one.lse));
    }
  }
}

// Unit roundoff of the P format (half its relative spacing).
double unit_roundoff(problem::PFormat p) {
  switch (p) {
    case problem::PFormat::f32: return 0x1p-24;
    case problem::PFormat::bf16: return 0x1p-8;
    case problem::PFormat::f16: return 0x1p-11;
    case problem::PFormat::fp8: return 0x1p-4;  // e4m3: 3 mantissa bits
  }
  return 1;
}

// Different split counts change bits, within a bound derived from the recipe's steps. Scores do
// not depend on the split (each is summed over d alone), so only three things differ:
// - P is rounded relative to another max: each run's split output is Σ p(1+δ)v / l with |δ| <= u_P
//   (no subnormal P here: harness logits differ by < 1, so p > e^-2 > 2^-6), so each run is within
//   u_P·Vmax of the exact softmax average of its V values: 2·u_P·Vmax between runs;
// - float32 sums of at most L + S terms in other groupings: 2·(L + S + 8)·2^-24·Vmax;
// - bf16 partials (recipe.partial) add their own rounding in the split runs: u_bf16·Vmax each;
// - the bf16 output rounding: one bf16 ulp of the output.
// Vmax = the largest |V value| the row sees, times the KV scale.
TEST(RefEmulated, SplitCountsStayWithinTheDerivedBound) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    const int64_t L = 333;
    const Inputs in = generate(test::small_case(3, L, seed));
    KvCaches caches(in.kv, in.batch.cache_rows());
    for (const problem::Recipe& recipe : problem::recipes()) {
      SCOPED_TRACE(recipe.name);
      const problem::KvCache cache = caches.for_recipe(recipe);
      const KvDecoder kv(cache, recipe);
      const EmulatedResult base = run(in, caches, recipe, 0);
      for (int splits : {2, 5, 32, 64}) {
        const EmulatedResult r = run(in, caches, recipe, splits);
        int differing = 0;
        for (int64_t b = 0; b < 3; ++b) {
          float vmax = 0;
          std::vector<float> v(DV);
          for (int64_t t = 0; t < L; ++t) {
            kv.v_row(in.batch.kv_row(b, t), v.data());
            for (float x : v) vmax = std::max(vmax, std::fabs(x));
          }
          if (kv.v_scaled()) vmax *= kv.scale();
          const double partial_u = recipe.partial == problem::PartialFormat::bf16 ? 0x1p-8 : 0.0;
          const double bound_wo_ulp =
              (2 * unit_roundoff(recipe.p) + 2 * partial_u + 2 * (L + splits + 8) * 0x1p-24) * vmax;
          for (int e = 0; e < H * DV; ++e) {
            const float x = quant::bf16_to_f32(base.out[b * H * DV + e]);
            const float y = quant::bf16_to_f32(r.out[b * H * DV + e]);
            const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(x), std::fabs(y))) - 7);
            ASSERT_LE(std::fabs(x - y), bound_wo_ulp + ulp) << "splits " << splits << " element " << e;
            differing += x != y;
          }
        }
        RecordProperty(std::string(recipe.name) + "_splits" + std::to_string(splits) + "_differing",
                       differing);
      }
    }
  }
}

TEST(RefEmulated, ThreadCountDoesNotChangeABit) {
  CaseSpec c = test::small_case(9, 260, 11);
  c.ragged = true;
  const Inputs in = generate(c);
  KvCaches caches(in.kv, in.batch.cache_rows());
  std::vector<problem::Recipe> all(problem::recipes().begin(), problem::recipes().end());
  for (const char* sums : {"a8w8:fp8-acc=tc64", "a8w8:fp8-acc=tc"})  // the tensor core's model
    all.push_back(problem::parse_recipe(sums));
  for (const problem::Recipe& recipe : all) {
    SCOPED_TRACE(problem::spell(recipe));
    EmulatedResult one, two, four;
    test::with_threads(1, [&] { one = run(in, caches, recipe, recipe.num_splits); });
    test::with_threads(2, [&] { two = run(in, caches, recipe, recipe.num_splits); });
    test::with_threads(4, [&] { four = run(in, caches, recipe, recipe.num_splits); });
    EXPECT_TRUE(test::same_bits(one.out, two.out));
    EXPECT_TRUE(test::same_bits(one.out, four.out));
    EXPECT_TRUE(test::same_bits(one.lse, four.lse));
  }
}

TEST(RefEmulated, PermutingPagesWithThePageTableChangesNothing) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(5, 180, seed);
    c.ragged = true;
    c.page_size = 16;
    const Inputs in = generate(c);
    const test::Permuted moved = test::permute_pages(in.batch, in.kv, seed);
    KvCaches a_caches(in.kv, in.batch.cache_rows()), b_caches(moved.kv, moved.batch.cache_rows());
    for (const problem::Recipe& recipe : problem::recipes()) {
      SCOPED_TRACE(recipe.name);
      const EmulatedResult a = decode_emulated(in.batch, in.q, a_caches.for_recipe(recipe), recipe,
                                               recipe.num_splits);
      const EmulatedResult b = decode_emulated(moved.batch, in.q, b_caches.for_recipe(recipe),
                                               recipe, recipe.num_splits);
      EXPECT_TRUE(test::same_bits(a.out, b.out));
      EXPECT_TRUE(test::same_bits(a.lse, b.lse));
    }
  }
}

// With the same cache, a request alone gives the bits it gets inside the batch — for recipes
// whose Q quantization does not look at other requests (per-tensor dynamic Q scales do).
TEST(RefEmulated, RequestAloneEqualsRequestInBatch) {
  CaseSpec c = test::small_case(4, 130, 5);
  c.ragged = true;
  const Inputs in = generate(c);
  KvCaches caches(in.kv, in.batch.cache_rows());
  for (const problem::Recipe& recipe : problem::recipes()) {
    if (recipe.q == problem::QFormat::fp8_harness || recipe.q == problem::QFormat::fp8_dynamic)
      continue;
    SCOPED_TRACE(recipe.name);
    const problem::KvCache cache = caches.for_recipe(recipe);
    const EmulatedResult all = decode_emulated(in.batch, in.q, cache, recipe, recipe.num_splits);
    for (int64_t b = 0; b < in.batch.num_requests(); ++b) {
      const EmulatedResult one = decode_emulated(test::single_request(in.batch, b),
                                                 test::q_rows(in.batch, in.q, b), cache, recipe,
                                                 recipe.num_splits);
      const std::vector<uint16_t> part(all.out.begin() + b * H * DV, all.out.begin() + (b + 1) * H * DV);
      EXPECT_TRUE(test::same_bits(one.out, part)) << "request " << b;
    }
  }
}

TEST(RefEmulated, EmptyRowsGiveZeroAndMinusInfinity) {
  CaseSpec c = test::small_case(20, 40, 3);
  c.ragged = true;  // lengths 0, 1, 2, 3, ...
  c.q_len = 4;
  const Inputs in = generate(c);
  KvCaches caches(in.kv, in.batch.cache_rows());
  for (const problem::Recipe& recipe : problem::recipes())
    for (int splits : {0, 4}) {
      const EmulatedResult r = run(in, caches, recipe, splits);
      int empty = 0;
      for (int64_t b = 0; b < in.batch.num_requests(); ++b)
        for (int64_t i = 0; i < 4; ++i) {
          if (in.batch.visible_kv(b, i) != 0) continue;
          ++empty;
          const int64_t row = in.batch.qo_indptr()[b] + i;
          for (int e = 0; e < H * DV; ++e) ASSERT_EQ(r.out[row * H * DV + e], 0) << recipe.name;
          for (int h = 0; h < H; ++h) ASSERT_EQ(r.lse[row * H + h], -INFINITY) << recipe.name;
        }
      EXPECT_GT(empty, 4);
    }
}

// One key: P = b^0 = 1 in every format, so out = bf16(fl32(v · kv scale)) (as a value: the sums
// start from +0, so a -0 element comes out as +0).
TEST(RefEmulated, OneTokenGivesItsVRow) {
  const Inputs in = generate(test::small_case(3, 1, 8));
  KvCaches caches(in.kv, in.batch.cache_rows());
  for (const problem::Recipe& recipe : problem::recipes()) {
    SCOPED_TRACE(recipe.name);
    const problem::KvCache cache = caches.for_recipe(recipe);
    const KvDecoder kv(cache, recipe);
    const EmulatedResult r = decode_emulated(in.batch, in.q, cache, recipe, recipe.num_splits);
    std::vector<float> v(DV);
    for (int64_t b = 0; b < 3; ++b) {
      kv.v_row(b, v.data());
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < DV; ++d) {
          float want = v[d];
          if (kv.v_scaled()) want *= kv.scale();
          if (recipe.partial == problem::PartialFormat::bf16) want = round_to_bf16(want);
          ASSERT_EQ(quant::bf16_to_f32(r.out[(b * H + h) * DV + d]),
                    quant::bf16_to_f32(quant::f32_to_bf16(want)))
              << b << " " << h << " " << d;
        }
    }
  }
}

// EmulatedResult::row_sum_rounding (check/lse.h's rounded-P row sum term): 0 where no P is rounded
// (f32 P) and on one-key rows (P = 1 exactly); otherwise positive and at most u(P) plus the
// subnormal floor of each key, for the single pass and for every split of a split-K schedule.
TEST(RefEmulated, RowSumRoundingIsZeroWithoutRoundingAndAtMostTheUnitRoundoff) {
  const Inputs one = generate(test::small_case(3, 1, 8));
  const Inputs many = generate(test::small_case(3, 300, 9));
  for (const char* spelling : {"a16w16", "a16w16:p=f16", "a16w8:p=fp8", "a16w16:p=f32"}) {
    SCOPED_TRACE(spelling);
    const problem::Recipe r = problem::parse_recipe(spelling);
    const double u = r.p == problem::PFormat::f32 ? 0.0
                     : r.p == problem::PFormat::bf16 ? 0x1p-8
                     : r.p == problem::PFormat::f16  ? 0x1p-11
                                                     : 0x1p-4;
    KvCaches one_caches(one.kv, one.batch.cache_rows()), many_caches(many.kv, many.batch.cache_rows());
    for (float d : decode_emulated(one.batch, one.q, one_caches.for_recipe(r), r, 0).row_sum_rounding)
      ASSERT_EQ(d, 0.0f);
    for (int splits : {0, 3}) {
      const EmulatedResult e = decode_emulated(many.batch, many.q, many_caches.for_recipe(r), r, splits);
      ASSERT_EQ(e.row_sum_rounding.size(), e.lse.size());
      for (float d : e.row_sum_rounding) {
        if (u == 0) {
          ASSERT_EQ(d, 0.0f);
        } else {
          // 300 keys whose P may each sit below the smallest normal: u + 300 h, h = u 2^(1 - bias).
          ASSERT_GT(d, 0.0f);
          ASSERT_LE(d, u * (1 + 300 * 0x1p-6));
        }
      }
    }
  }
}

// A gross-error guard (the gate's tolerances live in check/): every recipe stays close to the
// exact output in relative Frobenius norm, and forgetting the KV scale would not.
TEST(RefEmulated, RecipesStayNearTheExactOutput) {
  const Inputs in = generate(test::small_case(4, 256, 21));
  KvCaches caches(in.kv, in.batch.cache_rows());
  const ExactResult exact = decode_exact(in.batch, in.q, in.kv);
  for (const problem::Recipe& recipe : problem::recipes()) {
    const EmulatedResult r = run(in, caches, recipe, recipe.num_splits);
    double num = 0, den = 0;
    for (std::size_t e = 0; e < exact.out.size(); ++e) {
      const double d = quant::bf16_to_f32(r.out[e]) - exact.out[e];
      num += d * d;
      den += static_cast<double>(exact.out[e]) * exact.out[e];
    }
    const double rel = std::sqrt(num / den);
    const double limit = recipe.kv == problem::KvFormat::mxfp4 ? 0.25
                         : recipe.kv == problem::KvFormat::fp8 ? 0.1
                                                               : 0.01;
    EXPECT_LT(rel, limit) << recipe.name;
    for (std::size_t e = 0; e < exact.lse.size(); ++e)
      ASSERT_NEAR(r.lse[e], exact.lse[e], 0.02) << recipe.name << " lse " << e;
  }
}

TEST(RefEmulated, RejectsMismatchedCachesAndSplits) {
  const Inputs in = generate(test::small_case(2, 10, 1));
  KvCaches caches(in.kv, in.batch.cache_rows());
  const problem::Recipe a8w8 = *problem::find_recipe("a8w8");
  EXPECT_THROW(decode_emulated(in.batch, in.q, caches.bf16(), a8w8, 1), problem::ProblemError);
  EXPECT_THROW(decode_emulated(in.batch, in.q, caches.fp8(quant::Fp8Format::e4m3fnuz), a8w8, 1),
               problem::ProblemError);
  EXPECT_THROW(decode_emulated(in.batch, in.q, caches.fp8(a8w8.fp8), a8w8, -1), problem::ProblemError);
  EXPECT_THROW(decode_emulated(problem::Batch::uniform(2, 11), in.q, caches.fp8(a8w8.fp8), a8w8, 1),
               problem::ProblemError);
  EXPECT_NO_THROW(decode_emulated(in.batch, in.q, caches.fp8(a8w8.fp8), a8w8, 1));
}

}  // namespace
}  // namespace mlacheck::ref
