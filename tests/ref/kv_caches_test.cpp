// ref/kv_caches.h: the quantized caches equal one direct call of the quant/ quantizers, and read
// on demand they decode as stored.
#include <vector>

#include <gtest/gtest.h>

#include "problem/error.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "ref/decode_emulated.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "test_support.h"

namespace mlacheck::ref {
namespace {

TEST(RefKvCaches, MatchOneCallOfTheQuantizers) {
  // 5000 rows: more than one 4096-row chunk of the MXFP4 path.
  const Inputs in = generate(test::small_case(5, 1000, 12, Profile::outliers));
  std::vector<float> x(in.kv.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = quant::bf16_to_f32(in.kv[i]);
  KvCaches caches(in.kv, in.batch.cache_rows());
  for (quant::E2M1Rounding r : {quant::E2M1Rounding::rne, quant::E2M1Rounding::ties_away}) {
    std::vector<uint8_t> packed(x.size() / 2), scales(x.size() / 32);
    quant::mxfp4_quantize(x, problem::kQkDim, r, packed, scales);
    const problem::KvCache c = caches.mxfp4(r);
    EXPECT_TRUE(std::equal(packed.begin(), packed.end(), c.mxfp4.begin(), c.mxfp4.end()));
    EXPECT_TRUE(std::equal(scales.begin(), scales.end(), c.mxfp4_scale.begin(), c.mxfp4_scale.end()));
  }
  for (quant::Fp8Format f : {quant::Fp8Format::e4m3fn, quant::Fp8Format::e4m3fnuz}) {
    std::vector<uint8_t> codes(x.size());
    const float scale = quant::fp8_harness_quantize(in.kv, f, codes);
    const problem::KvCache c = caches.fp8(f);
    EXPECT_EQ(c.fp8_scale, scale);
    EXPECT_EQ(c.fp8_format, f);
    EXPECT_TRUE(std::equal(codes.begin(), codes.end(), c.fp8.begin(), c.fp8.end()));
  }
  EXPECT_THROW(KvCaches(std::span(in.kv).first(100), 1), problem::ProblemError);
  std::vector<uint8_t> too_small(10);
  EXPECT_THROW(quantize_mxfp4_rows(in.kv, quant::E2M1Rounding::rne, too_small, too_small),
               problem::ProblemError);
}

// A cache quantized on read (problem/kv_cache.h) decodes to the bits of the stored one, for every
// preset and the other variants (e4m3fnuz, ties-away MXFP4), on a paged, ragged, causal case with
// the drift and sensitivity options that read K and V other ways: what lets `ref` and `gen`
// emulate without holding the derived caches (issue 11 item 6).
TEST(RefKvCaches, QuantizedOnReadDecodesAsStored) {
  CaseSpec spec = test::small_case(4, 200, 31, Profile::outliers);
  spec.ragged = true;
  spec.page_size = 16;
  spec.q_len = 2;
  const Inputs in = generate(spec);
  const int64_t rows = in.batch.cache_rows();
  KvCaches stored(in.kv, rows);
  std::vector<problem::Recipe> recipes(problem::recipes().begin(), problem::recipes().end());
  problem::Recipe fnuz = *problem::find_recipe("a8w8"), away = *problem::find_recipe("a16w4");
  fnuz.fp8 = quant::Fp8Format::e4m3fnuz;
  away.mxfp4_rounding = quant::E2M1Rounding::ties_away;
  recipes.push_back(fnuz);
  recipes.push_back(away);
  for (const problem::Recipe& r : recipes) {
    SCOPED_TRACE(problem::spell(r));
    const problem::KvCache on_read = on_read_cache(in.kv, rows, r);
    EXPECT_EQ(on_read.on_read.has_value(), r.kv != problem::KvFormat::bf16);
    EXPECT_TRUE(on_read.fp8.empty() && on_read.mxfp4.empty());
    problem::KvCache held = stored.for_recipe(r);
    held.bf16 = in.kv;  // for exact K
    EXPECT_EQ(on_read.fp8_scale, held.fp8_scale);
    for (const bool exact_k : {false, true}) {
      EmulationOptions o;
      o.exact_k = exact_k;
      o.p_flips = true;
      o.flip_noise = 1e-6;
      const auto schedule = problem::Schedule::uniform(3, 16);
      const EmulatedResult a = decode_emulated(in.batch, in.q, held, r, schedule, o);
      const EmulatedResult b = decode_emulated(in.batch, in.q, on_read, r, schedule, o);
      EXPECT_TRUE(test::same_bits<uint16_t>(a.out, b.out));
      EXPECT_TRUE(test::same_bits<float>(a.lse, b.lse));
      EXPECT_TRUE(test::same_bits<float>(a.p_flip, b.p_flip));
    }
    EmulationOptions sens;
    sens.sensitivity = true;
    const EmulatedResult a = decode_emulated(in.batch, in.q, held, r, problem::Schedule::single(0), sens);
    const EmulatedResult b = decode_emulated(in.batch, in.q, on_read, r, problem::Schedule::single(0), sens);
    EXPECT_TRUE(test::same_bits<float>(a.pv_spread, b.pv_spread));
    EXPECT_TRUE(test::same_bits<uint16_t>(a.out, b.out));
  }
  // Without the bf16 rows there is nothing to quantize from.
  problem::KvCache no_rows = on_read_cache(in.kv, rows, *problem::find_recipe("a16w8"));
  no_rows.bf16 = {};
  EXPECT_THROW(decode_emulated(in.batch, in.q, no_rows, *problem::find_recipe("a16w8"), 1), problem::ProblemError);
}

TEST(RefKvCaches, ScalesAloneMatchTheQuantizer) {
  const Inputs in = generate(test::small_case(3, 2000, 13, Profile::boundary));  // > one 4096-row chunk
  std::vector<uint8_t> packed(in.kv.size() / 2), scales(in.kv.size() / 32), alone(scales.size());
  quantize_mxfp4_rows(in.kv, quant::E2M1Rounding::rne, packed, scales);
  mxfp4_scale_rows(in.kv, alone);
  EXPECT_EQ(alone, scales);
  EXPECT_THROW(mxfp4_scale_rows(in.kv, std::span(alone).first(5)), problem::ProblemError);
}

}  // namespace
}  // namespace mlacheck::ref
