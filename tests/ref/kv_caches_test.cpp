// ref/kv_caches.h: the quantized caches equal one direct call of the quant/ quantizers.
#include <vector>

#include <gtest/gtest.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
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

}  // namespace
}  // namespace mlacheck::ref
