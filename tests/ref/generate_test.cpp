// ref/generate.h and ref/layout.h: determinism, pinned data, layouts and what each profile promises.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <gtest/gtest.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "ref/decode_exact.h"
#include "ref/generate.h"
#include "ref/layout.h"
#include "ref/random.h"
#include "test_support.h"

namespace mlacheck::ref {
namespace {

using test::seeds;
using test::seed_trace;
constexpr int H = problem::kNumHeads, D = problem::kQkDim;

TEST(RefGenerate, SameBitsForAnyThreadCount) {
  for (Profile p : {Profile::harness, Profile::peaked, Profile::outliers, Profile::boundary}) {
    SCOPED_TRACE(std::string(to_string(p)));
    CaseSpec c = test::small_case(9, 200, 31, p);
    c.ragged = true;
    c.page_size = 8;
    c.shuffle_pages = true;
    c.q_len = 2;
    std::optional<Inputs> one, two, four;
    test::with_threads(1, [&] { one.emplace(generate(c)); });
    test::with_threads(2, [&] { two.emplace(generate(c)); });
    test::with_threads(4, [&] { four.emplace(generate(c)); });
    EXPECT_TRUE(test::same_bits(one->q, two->q));
    EXPECT_TRUE(test::same_bits(one->kv, two->kv));
    EXPECT_TRUE(test::same_bits(one->q, four->q));
    EXPECT_TRUE(test::same_bits(one->kv, four->kv));
  }
}

// Pinned: the harness profile's bits. A change here changes every golden file's inputs; if it is
// intended, bump the generator version (io/ metadata) and update these numbers.
TEST(RefGenerate, ProfilesArePinned) {
  const struct {
    Profile p;
    uint64_t q, kv;
    uint16_t q0, kv1;
  } pins[] = {
      {Profile::harness, 0x58732bb6c0a91463ull, 0x0032f13973b81cc0ull, 0xbd13, 0xbb85},
      {Profile::peaked, 0xb41ab93395520b89ull, 0x97e21fe7df4c7475ull, 0xc006, 0xbb85},
      {Profile::outliers, 0x58732bb6c0a91463ull, 0x75bda752a7d4d962ull, 0xbd13, 0xbb85},
      {Profile::boundary, 0xafeb1adc91c5ddf4ull, 0x10dd9246bf67b4e4ull, 0x3e60, 0xbe20},
  };
  for (const auto& pin : pins) {
    SCOPED_TRACE(std::string(to_string(pin.p)));
    const Inputs in = generate(test::small_case(4, 1024, 4217, pin.p));  // the first harness shape
    EXPECT_EQ(test::fnv1a(in.q), pin.q);
    EXPECT_EQ(test::fnv1a(in.kv), pin.kv);
    EXPECT_EQ(in.q[0], pin.q0);  // harness: bf16(bf16(-1.7966) * 0.02) = -0.0359
    EXPECT_EQ(in.kv[1], pin.kv1);
  }
}

TEST(RefGenerate, HarnessProfileIsRandnTimes002InBf16) {
  const CaseSpec c = test::small_case(2, 50, 4217);
  const Inputs in = generate(c);
  for (std::size_t i = 0; i < in.kv.size(); i += 37) {
    const float z = quant::bf16_to_f32(quant::f32_to_bf16(static_cast<float>(normal_at(c.seed, 2, i))));
    ASSERT_EQ(in.kv[i], quant::f32_to_bf16(z * 0.02f)) << i;
  }
  for (std::size_t i = 0; i < in.q.size(); i += 37) {
    const float z = quant::bf16_to_f32(quant::f32_to_bf16(static_cast<float>(normal_at(c.seed, 1, i))));
    ASSERT_EQ(in.q[i], quant::f32_to_bf16(z * 0.02f)) << i;
  }
  // Magnitudes like the competition's tensors (NUMERICS §4: amax 0.08-0.13 for 2.4M elements).
  float amax = 0;
  for (uint16_t x : in.kv) amax = std::max(amax, std::fabs(quant::bf16_to_f32(x)));
  EXPECT_GT(amax, 0.05f);
  EXPECT_LT(amax, 0.2f);
}

TEST(RefGenerate, RaggedLengthsCoverTheAwkwardOnes) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    const std::vector<int32_t> l = ragged_lengths(64, 1024, 16, seed);
    const std::set<int32_t> got(l.begin(), l.end());
    for (int32_t want : {0, 1, 2, 3, 5, 7, 13, 31, 61, 127, 251, 509, 1021, 15, 16, 17, 31, 33, 1023, 1024})
      EXPECT_TRUE(got.count(want)) << want;
    for (int32_t x : l) EXPECT_LE(x, 1024);
    EXPECT_NE(ragged_lengths(64, 1024, 16, seed), ragged_lengths(64, 1024, 16, seed + 1));
  }
}

TEST(RefGenerate, ShuffledPagesArePermutationsAndHoldTheSameKeys) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(7, 100, seed);
    c.ragged = true;
    c.page_size = 8;
    const Inputs ordered = generate(c);
    c.shuffle_pages = true;
    const Inputs shuffled = generate(c);
    const problem::Batch& b = shuffled.batch;
    ASSERT_TRUE(b.paged());
    std::vector<int32_t> pages(b.kv_indices().begin(), b.kv_indices().end());
    std::sort(pages.begin(), pages.end());
    for (std::size_t i = 0; i < pages.size(); ++i) ASSERT_EQ(pages[i], static_cast<int32_t>(i));
    EXPECT_FALSE(std::equal(b.kv_indices().begin(), b.kv_indices().end(),
                            ordered.batch.kv_indices().begin()));
    for (int64_t r = 0; r < b.num_requests(); ++r)
      for (int64_t t = 0; t < b.kv_len(r); ++t)
        ASSERT_TRUE(std::equal(shuffled.kv.begin() + b.kv_row(r, t) * D,
                               shuffled.kv.begin() + (b.kv_row(r, t) + 1) * D,
                               ordered.kv.begin() + ordered.batch.kv_row(r, t) * D));
    EXPECT_EQ(ordered.q, shuffled.q);
  }
}

// Peaked: a few keys take (nearly) all the attention, and the logits are large.
TEST(RefGenerate, PeakedProfileConcentratesAttention) {
  const Inputs in = generate(test::small_case(4, 500, 3, Profile::peaked));
  const ExactResult r = decode_exact(in.batch, in.q, in.kv);
  for (int64_t b = 0; b < 4; ++b)
    for (int h = 0; h < H; ++h) {
      // lse - max logit = log Σ e^(s - max) is small when one key dominates.
      double smax = -1e300;
      for (int64_t t = 0; t < 500; ++t) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += static_cast<double>(quant::bf16_to_f32(in.q[(b * H + h) * D + d])) *
                 quant::bf16_to_f32(in.kv[in.batch.kv_row(b, t) * D + d]);
        smax = std::max(smax, dot / 24);
      }
      EXPECT_GT(smax, 8.0);
      EXPECT_LT(r.lse[b * H + h] - smax, std::log(4.0) + 0.1);  // at most ~4 keys share the mass
    }
}

TEST(RefGenerate, OutliersProfileHasLargeChannelsInRopeAndLatentDims) {
  const Inputs in = generate(test::small_case(2, 2000, 9, Profile::outliers));
  std::vector<double> rms(D, 0.0);
  for (int64_t r = 0; r < 4000; ++r)
    for (int d = 0; d < D; ++d) rms[d] += std::pow(quant::bf16_to_f32(in.kv[r * D + d]), 2) / 4000;
  int rope = 0, latent = 0;
  for (int d = 0; d < D; ++d) {
    const double f = std::sqrt(rms[d]) / 0.02;
    if (f > 5) (d >= problem::kVDim ? rope : latent)++;
    EXPECT_LT(f, 120) << d;
  }
  EXPECT_EQ(rope, 4);
  EXPECT_EQ(latent, 4);
}

// Boundary: the harness FP8 scale is 2^-11, so x / s is exact and many codes sit on ties; block
// maxima sit on E8M0 steps; E2M1 ties are frequent.
TEST(RefGenerate, BoundaryProfileHitsTiesAndScaleSteps) {
  const Inputs in = generate(test::small_case(2, 300, 5, Profile::boundary));
  for (const std::vector<uint16_t>* t : {&in.q, &in.kv}) {
    std::vector<uint8_t> codes(t->size());
    EXPECT_EQ(quant::fp8_harness_quantize(*t, quant::Fp8Format::e4m3fn, codes), 0x1p-11f);
    std::size_t fp8_ties = 0, e2m1_ties = 0, steps = 0;
    for (std::size_t blk = 0; blk < t->size() / 32; ++blk) {
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(quant::bf16_to_f32((*t)[blk * 32 + j])));
      const int e = quant::mxfp4_block_exponent(amax);
      int amax_exp;
      const float m = 2 * std::frexp(amax, &amax_exp);  // amax's significand in [1, 2)
      steps += m == 1.75f || m == 1.75f - 1.0f / 128 || m == 1.0f;
      for (int j = 0; j < 32; ++j) {
        const float x = std::fabs(quant::bf16_to_f32((*t)[blk * 32 + j]));
        const float y = x * 2048.0f;  // on the fp8 grid's scale
        const float q = x / std::ldexp(1.0f, e);
        for (float tie : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f}) e2m1_ties += q == tie;
        // a midpoint of two fp8 neighbours: y has exactly one more significant bit than fp8 keeps
        if (y > 0) {
          int ex;
          const float f = std::frexp(y, &ex);
          const float scaled = std::ldexp(f, 5);  // 1 + 3 mantissa bits + 1 tie bit
          fp8_ties += scaled == std::floor(scaled) && std::fmod(scaled, 2.0f) == 1.0f && y >= 0x1p-6f;
        }
      }
    }
    const double n = static_cast<double>(t->size());
    EXPECT_GT(fp8_ties / n, 0.1);
    EXPECT_GT(e2m1_ties / n, 0.2);
    EXPECT_GT(steps, t->size() / 32 / 4);
  }
}

TEST(RefGenerate, RejectsImpossibleSpecs) {
  CaseSpec c = test::small_case(2, 10, 1);
  c.q_len = 5;
  EXPECT_THROW(generate(c), problem::ProblemError);
  c.q_len = 1;
  c.page_size = 0;
  EXPECT_THROW(generate(c), problem::ProblemError);
  c.page_size = 1;
  c.batch = -1;
  EXPECT_THROW(generate(c), problem::ProblemError);
}

}  // namespace
}  // namespace mlacheck::ref
