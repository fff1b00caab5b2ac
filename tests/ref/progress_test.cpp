// ref/progress.h: what a Progress sees from the generator and both decodes.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "problem/recipe.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"
#include "test_support.h"

namespace mlacheck::ref {
namespace {

// Records every call; calls are serialized by the caller (progress.h), so no lock is needed.
class Recorder final : public Progress {
 public:
  void update(int64_t done, int64_t total) override { calls.push_back({done, total}); }
  std::vector<std::pair<int64_t, int64_t>> calls;

  void expect_complete() const {
    ASSERT_FALSE(calls.empty());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].second, calls.back().second);
      if (i > 0) {
        EXPECT_GT(calls[i].first, calls[i - 1].first);
      }
    }
    EXPECT_EQ(calls.back().first, calls.back().second);
  }
};

TEST(RefProgress, DoneIncreasesToTotal) {
  CaseSpec c = test::small_case(9, 150, 2);
  c.ragged = true;  // empty requests still count
  Recorder gen;
  const Inputs in = generate(c, &gen);
  gen.expect_complete();
  Recorder exact;
  decode_exact(in.batch, in.q, in.kv, &exact);
  exact.expect_complete();
  KvCaches caches(in.kv, in.batch.cache_rows());
  const problem::Recipe r = *problem::find_recipe("a8w8");
  Recorder emu;
  decode_emulated(in.batch, in.q, caches.for_recipe(r), r, r.num_splits, &emu);
  emu.expect_complete();
  EXPECT_EQ(emu.calls.back().second, exact.calls.back().second);
}

}  // namespace
}  // namespace mlacheck::ref
