// The planted faults of the emulation (ref/decode_emulated.h EmulationOptions::fault_*), which
// `mlacheck power --wrong-answers recipe` makes its wrong answers with: each equals the fault made
// another way, bit for bit, and masking never turns a row into NaN.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "problem/recipe.h"
#include "problem/schedule.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "ref/decode_emulated.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "test_support.h"

namespace mlacheck::ref {
namespace {

using Range = std::pair<int64_t, int64_t>;

// Keys [len / 3, len / 2) of every request.
Range middle_keys(int64_t, int64_t len) { return {len / 3, len / 2}; }

// The same requests with the keys `drop` names left out of a page-size-1 page table.
problem::Batch without(const problem::Batch& b, Range (*drop)(int64_t, int64_t)) {
  std::vector<int32_t> kv_indptr{0}, indices;
  for (int64_t r = 0; r < b.num_requests(); ++r) {
    const auto [first, last] = drop(r, b.kv_len(r));
    for (int64_t t = 0; t < b.kv_len(r); ++t)
      if (t < first || t >= last) indices.push_back(static_cast<int32_t>(b.kv_row(r, t)));
    kv_indptr.push_back(static_cast<int32_t>(indices.size()));
  }
  return problem::Batch({b.qo_indptr().begin(), b.qo_indptr().end()}, std::move(kv_indptr),
                        std::move(indices), 1, b.cache_rows());
}

TEST(EmulatedFaults, MaskedKeysEqualAPageTableWithoutThemInOnePass) {
  const Inputs in = generate(test::small_case(3, 90, 12));
  const problem::Batch fewer = without(in.batch, middle_keys);
  KvCaches caches(in.kv, in.batch.cache_rows());
  EmulationOptions faults;
  faults.fault_masked_keys = middle_keys;
  for (const problem::Recipe& r : problem::recipes()) {
    SCOPED_TRACE(r.name);
    const EmulatedResult masked = decode_emulated(in.batch, in.q, caches.for_recipe(r), r,
                                                  problem::Schedule::single(), faults);
    const EmulatedResult dropped =
        decode_emulated(fewer, in.q, caches.for_recipe(r), r, problem::Schedule::single());
    ASSERT_TRUE(test::same_bits(masked.out, dropped.out));
    ASSERT_TRUE(test::same_bits(masked.lse, dropped.lse));
    const EmulatedResult plain =
        decode_emulated(in.batch, in.q, caches.for_recipe(r), r, problem::Schedule::single());
    ASSERT_FALSE(test::same_bits(masked.out, plain.out));  // the fault does something
  }
}

TEST(EmulatedFaults, SkippedRopeEqualsZeroRopeDimsOfABf16Q) {
  const Inputs in = generate(test::small_case(2, 70, 13));
  std::vector<uint16_t> q_no_rope = in.q;
  for (std::size_t i = 0; i < q_no_rope.size(); ++i)
    if (static_cast<int>(i % problem::kQkDim) >= problem::kVDim) q_no_rope[i] = 0;
  KvCaches caches(in.kv, in.batch.cache_rows());
  EmulationOptions faults;
  faults.fault_skip_rope = true;
  for (const char* spelling : {"a16w16", "a16w8", "a16w4"})
    for (const char* schedule : {"single", "splits=3,tile=16"}) {
      SCOPED_TRACE(std::string(spelling) + " " + schedule);
      const problem::Recipe r = problem::parse_recipe(spelling);
      const problem::Schedule s = problem::parse_schedule(schedule);
      const EmulatedResult skipped = decode_emulated(in.batch, in.q, caches.for_recipe(r), r, s, faults);
      const EmulatedResult zeroed = decode_emulated(in.batch, q_no_rope, caches.for_recipe(r), r, s);
      ASSERT_TRUE(test::same_bits(skipped.out, zeroed.out));
      ASSERT_TRUE(test::same_bits(skipped.lse, zeroed.lse));
    }
}

// A split (or a softmax step, or a whole row) whose keys are all masked contributes nothing: no
// NaN in the merge, and a row with every key masked is 0 with LSE -inf, as an empty row.
TEST(EmulatedFaults, AFullyMaskedSplitOrRowContributesNothing) {
  const Inputs in = generate(test::small_case(2, 64, 14));
  KvCaches caches(in.kv, in.batch.cache_rows());
  const problem::Recipe r = problem::parse_recipe("a16w8");
  EmulationOptions last_quarter;
  last_quarter.fault_masked_keys = [](int64_t, int64_t len) { return Range{len - len / 4, len}; };
  const EmulatedResult split = decode_emulated(in.batch, in.q, caches.for_recipe(r), r,
                                               problem::parse_schedule("splits=4,tile=8"), last_quarter);
  for (float lse : split.lse) ASSERT_TRUE(std::isfinite(lse));
  for (uint16_t x : split.out) ASSERT_TRUE(std::isfinite(quant::bf16_to_f32(x)));
  EmulationOptions first_half;  // the first softmax steps see only masked keys
  first_half.fault_masked_keys = [](int64_t, int64_t len) { return Range{0, len / 2}; };
  const EmulatedResult steps = decode_emulated(in.batch, in.q, caches.for_recipe(r), r,
                                               problem::parse_schedule("single,tile=8"), first_half);
  for (float lse : steps.lse) ASSERT_TRUE(std::isfinite(lse));
  EmulationOptions all;
  all.fault_masked_keys = [](int64_t, int64_t len) { return Range{0, len}; };
  for (const char* schedule : {"single", "splits=3"}) {
    const EmulatedResult none = decode_emulated(in.batch, in.q, caches.for_recipe(r), r,
                                                problem::parse_schedule(schedule), all);
    for (float lse : none.lse) ASSERT_EQ(lse, -INFINITY);
    for (uint16_t x : none.out) ASSERT_EQ(quant::bf16_to_f32(x), 0.0f);
  }
}

}  // namespace
}  // namespace mlacheck::ref
