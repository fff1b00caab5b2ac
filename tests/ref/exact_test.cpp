// The exact mode (ref/decode_exact.h): agreement with an independent long-double implementation,
// and the invariants of attention that must hold bit for bit or within float32 rounding.
#include <algorithm>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "naive_decode.h"
#include "problem/error.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "ref/decode_exact.h"
#include "ref/generate.h"
#include "test_support.h"

namespace mlacheck::ref {
namespace {

using test::seeds;
using test::seed_trace;
constexpr int H = problem::kNumHeads, D = problem::kQkDim, DV = problem::kVDim;

// |exact - naive| within the float32 rounding of the result (half an ulp), plus the double
// arithmetic before it (relative 1e-13 of the output scale, far above its real size).
void expect_close_to_naive(const Inputs& in, const ExactResult& r) {
  const test::NaiveExact n = test::naive_exact(in.batch, in.q, in.kv);
  ASSERT_EQ(r.out.size(), n.out.size());
  for (std::size_t e = 0; e < r.out.size(); ++e) {
    const long double want = n.out[e];
    const long double tol = std::fabs(want) * 0x1p-24L + 1e-30L;
    ASSERT_LE(std::fabs(r.out[e] - want), tol) << "out element " << e;
  }
  for (std::size_t e = 0; e < r.lse.size(); ++e) {
    if (std::isinf(n.lse[e])) {
      ASSERT_TRUE(std::isinf(r.lse[e]) && r.lse[e] < 0) << "lse " << e;
      continue;
    }
    ASSERT_LE(std::fabs(r.lse[e] - n.lse[e]), std::fabs(n.lse[e]) * 0x1p-24L + 1e-12L)
        << "lse element " << e;
  }
}

TEST(RefExact, AgreesWithNaiveLongDouble) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    for (Profile p : {Profile::harness, Profile::peaked, Profile::outliers, Profile::boundary}) {
      SCOPED_TRACE(std::string(to_string(p)));
      const Inputs in = generate(test::small_case(3, 97, seed, p));
      expect_close_to_naive(in, decode_exact(in.batch, in.q, in.kv));
    }
  }
}

TEST(RefExact, CausalQueriesAgreeWithNaive) {
  for (uint64_t seed : seeds())
    for (int q_len : {2, 4}) {
      SCOPED_TRACE(seed_trace(seed) + ", q_len " + std::to_string(q_len));
      CaseSpec c = test::small_case(12, 70, seed);
      c.q_len = q_len;
      c.ragged = true;  // includes lengths 0, 1, 2, 3 < q_len: causally empty queries
      c.page_size = 16;
      c.shuffle_pages = true;
      const Inputs in = generate(c);
      const ExactResult r = decode_exact(in.batch, in.q, in.kv);
      expect_close_to_naive(in, r);
      // A query that sees no key gives 0 and -inf.
      for (int64_t b = 0; b < in.batch.num_requests(); ++b)
        for (int64_t i = 0; i < q_len; ++i)
          if (in.batch.visible_kv(b, i) == 0) {
            const int64_t row = in.batch.qo_indptr()[b] + i;
            for (int e = 0; e < H * DV; ++e) ASSERT_EQ(r.out[row * H * DV + e], 0.0f);
            for (int h = 0; h < H; ++h) ASSERT_EQ(r.lse[row * H + h], -INFINITY);
          }
      // The last query of a request sees every key; the first of a 4-query one does not.
      EXPECT_EQ(in.batch.visible_kv(0, q_len - 1), in.batch.kv_len(0));
    }
}

TEST(RefExact, EmptySequencesGiveZeroAndMinusInfinity) {
  const problem::Batch batch({0, 1, 2, 3}, {0, 0, 5, 5}, {}, 1, 5);
  std::vector<uint16_t> q(3 * H * D, quant::f32_to_bf16(0.5f)), kv(5 * D, quant::f32_to_bf16(1.0f));
  const ExactResult r = decode_exact(batch, q, kv);
  for (int64_t row : {0, 2}) {
    for (int e = 0; e < H * DV; ++e) EXPECT_EQ(r.out[row * H * DV + e], 0.0f);
    for (int h = 0; h < H; ++h) EXPECT_EQ(r.lse[row * H + h], -INFINITY);
  }
  // Five equal keys: every output is the V value 1, lse = s + ln 5 with s = 576·0.5/24 = 12.
  for (int e = 0; e < H * DV; ++e) EXPECT_EQ(r.out[H * DV + e], 1.0f);
  EXPECT_FLOAT_EQ(r.lse[H], static_cast<float>(12.0 + std::log(5.0)));
}

TEST(RefExact, OneTokenGivesItsVRow) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(5, 1, seed, Profile::outliers);
    const Inputs in = generate(c);
    const ExactResult r = decode_exact(in.batch, in.q, in.kv);
    for (int64_t b = 0; b < 5; ++b)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < DV; ++d)
          ASSERT_EQ(r.out[(b * H + h) * DV + d], quant::bf16_to_f32(in.kv[b * D + d]))
              << "request " << b << " head " << h << " dim " << d;
  }
}

TEST(RefExact, ThreadCountDoesNotChangeABit) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(7, 300, seed);
    c.ragged = true;
    const Inputs in = generate(c);
    ExactResult one, two, four;
    test::with_threads(1, [&] { one = decode_exact(in.batch, in.q, in.kv); });
    test::with_threads(2, [&] { two = decode_exact(in.batch, in.q, in.kv); });
    test::with_threads(4, [&] { four = decode_exact(in.batch, in.q, in.kv); });
    EXPECT_TRUE(test::same_bits(one.out, two.out));
    EXPECT_TRUE(test::same_bits(one.out, four.out));
    EXPECT_TRUE(test::same_bits(one.lse, two.lse));
    EXPECT_TRUE(test::same_bits(one.lse, four.lse));
  }
}

TEST(RefExact, PermutingPagesWithThePageTableChangesNothing) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(6, 200, seed, Profile::peaked);
    c.ragged = true;
    c.page_size = 16;
    const Inputs in = generate(c);
    const test::Permuted moved = test::permute_pages(in.batch, in.kv, seed);
    const ExactResult a = decode_exact(in.batch, in.q, in.kv);
    const ExactResult b = decode_exact(moved.batch, in.q, moved.kv);
    EXPECT_TRUE(test::same_bits(a.out, b.out));
    EXPECT_TRUE(test::same_bits(a.lse, b.lse));
    // The generator's shuffled layout holds the same keys as the contiguous one.
    c.shuffle_pages = true;
    const Inputs shuffled = generate(c);
    const ExactResult s = decode_exact(shuffled.batch, shuffled.q, shuffled.kv);
    EXPECT_TRUE(test::same_bits(a.out, s.out));
    EXPECT_TRUE(test::same_bits(a.lse, s.lse));
  }
}

TEST(RefExact, RequestAloneEqualsRequestInBatch) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    CaseSpec c = test::small_case(5, 150, seed);
    c.ragged = true;
    c.q_len = 2;
    const Inputs in = generate(c);
    const ExactResult all = decode_exact(in.batch, in.q, in.kv);
    for (int64_t b = 0; b < in.batch.num_requests(); ++b) {
      const ExactResult one = decode_exact(test::single_request(in.batch, b),
                                           test::q_rows(in.batch, in.q, b), in.kv);
      const int64_t row0 = in.batch.qo_indptr()[b];
      const std::vector<float> part(all.out.begin() + row0 * H * DV,
                                    all.out.begin() + (row0 + 2) * H * DV);
      EXPECT_TRUE(test::same_bits(one.out, part)) << "request " << b;
    }
  }
}

TEST(RefExact, UnusedCacheRowsAreNeverRead) {
  CaseSpec c = test::small_case(6, 90, 7);
  c.ragged = true;
  c.page_size = 16;
  const Inputs clean = generate(c);
  c.poison_unused = true;  // NaN in every row that belongs to no key
  const Inputs poisoned = generate(c);
  ASSERT_NE(clean.kv, poisoned.kv);
  const ExactResult a = decode_exact(clean.batch, clean.q, clean.kv);
  const ExactResult b = decode_exact(poisoned.batch, poisoned.q, poisoned.kv);
  EXPECT_TRUE(test::same_bits(a.out, b.out));
}

// Split the keys of every request in two halves (two batches over the same cache), decode each,
// merge by LSE in long double: equals the whole within the float32 roundings of the parts.
TEST(RefExact, MergingTwoHalvesByLseEqualsTheWhole) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    const Inputs in = generate(test::small_case(4, 301, seed, Profile::peaked));
    const ExactResult whole = decode_exact(in.batch, in.q, in.kv);
    std::vector<int32_t> first_rows, second_rows, kv1{0}, kv2{0};
    for (int64_t b = 0; b < 4; ++b) {
      const int64_t len = in.batch.kv_len(b), cut = len / 2;
      for (int64_t t = 0; t < len; ++t)
        (t < cut ? first_rows : second_rows).push_back(static_cast<int32_t>(in.batch.kv_row(b, t)));
      kv1.push_back(static_cast<int32_t>(first_rows.size()));
      kv2.push_back(static_cast<int32_t>(second_rows.size()));
    }
    const std::vector<int32_t> qo{0, 1, 2, 3, 4};
    const ExactResult r1 = decode_exact(problem::Batch(qo, kv1, first_rows, 1, in.batch.cache_rows()),
                                        in.q, in.kv);
    const ExactResult r2 = decode_exact(problem::Batch(qo, kv2, second_rows, 1, in.batch.cache_rows()),
                                        in.q, in.kv);
    for (int64_t row = 0; row < 4; ++row)
      for (int h = 0; h < H; ++h) {
        const long double l1 = r1.lse[row * H + h], l2 = r2.lse[row * H + h];
        const long double m = std::max(l1, l2);
        const long double w1 = std::exp(l1 - m), w2 = std::exp(l2 - m);
        const long double lse = m + std::log(w1 + w2);
        EXPECT_NEAR(static_cast<double>(lse), whole.lse[row * H + h], 1e-5);
        float vmax = 0;
        for (int d = 0; d < DV; ++d) vmax = std::max(vmax, std::fabs(whole.out[(row * H + h) * DV + d]));
        for (int d = 0; d < DV; ++d) {
          const std::size_t e = (row * H + h) * DV + d;
          const long double merged = (w1 * r1.out[e] + w2 * r2.out[e]) / (w1 + w2);
          // Parts and whole are each within half a float32 ulp of their exact values; the LSEs'
          // float32 rounding moves the weights by ~1e-7 relative: 1e-6 of the largest output.
          ASSERT_NEAR(static_cast<double>(merged), whole.out[e], 1e-6 * vmax + 1e-30) << e;
        }
      }
  }
}

TEST(RefExact, OutputLiesInTheConvexHullOfTheVRows) {
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE(seed_trace(seed));
    for (Profile p : {Profile::harness, Profile::peaked, Profile::boundary}) {
      CaseSpec c = test::small_case(6, 120, seed, p);
      c.ragged = true;
      c.q_len = 3;
      const Inputs in = generate(c);
      const ExactResult r = decode_exact(in.batch, in.q, in.kv);
      for (int64_t b = 0; b < in.batch.num_requests(); ++b)
        for (int64_t i = 0; i < 3; ++i) {
          const int64_t n = in.batch.visible_kv(b, i), row = in.batch.qo_indptr()[b] + i;
          if (n == 0) continue;
          for (int d = 0; d < DV; ++d) {
            float lo = INFINITY, hi = -INFINITY;
            for (int64_t t = 0; t < n; ++t) {
              const float v = quant::bf16_to_f32(in.kv[in.batch.kv_row(b, t) * D + d]);
              lo = std::min(lo, v);
              hi = std::max(hi, v);
            }
            for (int h = 0; h < H; ++h) {
              const float o = r.out[(row * H + h) * DV + d];
              ASSERT_TRUE(lo <= o && o <= hi) << to_string(p) << " request " << b << " query " << i
                                              << " dim " << d << ": " << o << " not in [" << lo
                                              << ", " << hi << "]";
            }
          }
        }
    }
  }
}

TEST(RefExact, RejectsInputsThatDoNotMatchTheBatch) {
  const problem::Batch batch = problem::Batch::uniform(2, 8);
  const std::vector<uint16_t> q(2 * H * D), kv(16 * D);
  EXPECT_NO_THROW(decode_exact(batch, q, kv));
  EXPECT_THROW(decode_exact(batch, std::span(q).first(q.size() - 1), kv), problem::ProblemError);
  EXPECT_THROW(decode_exact(batch, q, std::span(kv).first(15 * D)), problem::ProblemError);
}

}  // namespace
}  // namespace mlacheck::ref
