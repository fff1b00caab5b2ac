// cli/workspace_partials.h: the split partials of a launch's workspace in the golden schema's
// [T, S, 16, 512] / [T, S, 16] layout, as `mlacheck drift --strategy` writes them. A synthetic
// workspace whose every stored value names its row: a uniform plan (row t·S + s), a chunked plan
// with q_len 2 and unequal split counts (rows part_start[b] + i·S_b + s, missing splits 0 / -inf),
// a balanced plan read the same way,
// base-2 LSEs converted to ln, rows past the list's own count read where the kernel wrote them, a
// list outside the workspace and a missing region refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "cli/workspace_partials.h"
#include "gpu/workspace.h"
#include "problem/batch.h"
#include "problem/recipe.h"
#include "problem/shape.h"

namespace mlacheck::cli {
namespace {

using problem::kNumHeads;
using problem::kVDim;

float stored_out(int64_t row, int h, int d) { return static_cast<float>(row * 1000 + h * 10 + d % 7); }
float stored_lse(int64_t row, int h) { return static_cast<float>(row) + static_cast<float>(h) / 64; }

template <class T>
void put(std::vector<unsigned char>& ws, std::size_t offset, const std::vector<T>& v) {
  std::memcpy(ws.data() + offset, v.data(), v.size() * sizeof(T));
}

// A workspace of `layout` whose partial rows 0 .. rows-1 hold stored_out / stored_lse.
std::vector<unsigned char> filled(const gpu::WorkspaceLayout& layout, int64_t rows) {
  std::vector<unsigned char> ws(layout.bytes, 0xFF);
  std::vector<float> o(static_cast<std::size_t>(rows) * kNumHeads * kVDim), l(static_cast<std::size_t>(rows) * kNumHeads);
  for (int64_t r = 0; r < rows; ++r)
    for (int h = 0; h < kNumHeads; ++h) {
      l[static_cast<std::size_t>(r * kNumHeads + h)] = stored_lse(r, h);
      for (int d = 0; d < kVDim; ++d) o[static_cast<std::size_t>((r * kNumHeads + h) * kVDim + d)] = stored_out(r, h, d);
    }
  put(ws, layout.part_o, o);
  put(ws, layout.part_lse, l);
  return ws;
}

// Token t, split s of `p` holds row `row` (or is empty when row < 0).
void expect_slot(const SchemaPartials& p, int64_t t, int64_t s, int64_t row, bool base2 = false) {
  const int64_t slot = t * p.splits + s;
  for (int h = 0; h < kNumHeads; ++h) {
    const float lse = p.lse[static_cast<std::size_t>(slot * kNumHeads + h)];
    const float o = p.out[static_cast<std::size_t>((slot * kNumHeads + h) * kVDim + 5)];
    if (row < 0) {
      EXPECT_EQ(lse, -std::numeric_limits<float>::infinity()) << "token " << t << " split " << s;
      EXPECT_EQ(o, 0.0f) << "token " << t << " split " << s;
    } else {
      const float want = base2 ? static_cast<float>(stored_lse(row, h) * 0.69314718055994530942) : stored_lse(row, h);
      EXPECT_EQ(lse, want) << "token " << t << " split " << s << " head " << h;
      EXPECT_EQ(o, stored_out(row, h, 5)) << "token " << t << " split " << s << " head " << h;
    }
  }
}

TEST(CliWorkspacePartials, UniformPlanRowsAreTokenTimesSplitsPlusSplit) {
  // Requests of q_len 1 and 2 (3 tokens), 3 splits each.
  const problem::Batch batch({0, 1, 3}, {0, 100, 300}, {}, 1, 300);
  const problem::SplitPlan plan = problem::SplitPlan::uniform(3);
  const gpu::WorkspaceLayout layout = gpu::workspace_layout(*problem::find_recipe("a16w16"), plan, 3, 2, 200);
  const SchemaPartials p = schema_partials(batch, plan, layout, filled(layout, 9), false);
  ASSERT_EQ(p.splits, 3);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t s = 0; s < 3; ++s) expect_slot(p, t, s, t * 3 + s);
}

TEST(CliWorkspacePartials, ChunkedPlanRowsFollowTheWorkListAndPadMissingSplits) {
  // Request 0: 100 keys, q_len 1 -> 2 chunks of 64; request 1: 300 keys, q_len 2 -> 5 chunks.
  const problem::Batch batch({0, 1, 3}, {0, 100, 400}, {}, 1, 400);
  const problem::SplitPlan plan = problem::SplitPlan::chunked(64);
  const gpu::WorkspaceLayout layout = gpu::workspace_layout(*problem::find_recipe("a4w4"), plan, 3, 2, 300);
  std::vector<unsigned char> ws = filled(layout, 12);
  put(ws, layout.item_start, std::vector<int32_t>{0, 2, 7});
  put(ws, layout.part_start, std::vector<int64_t>{0, 2, 12});
  const SchemaPartials p = schema_partials(batch, plan, layout, ws, true);
  ASSERT_EQ(p.splits, 5);
  expect_slot(p, 0, 0, 0, true);
  expect_slot(p, 0, 1, 1, true);
  for (int64_t s = 2; s < 5; ++s) expect_slot(p, 0, s, -1);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t s = 0; s < 5; ++s) expect_slot(p, 1 + i, s, 2 + i * 5 + s, true);
}

// Requests of q_len 1 (100 keys) and q_len 2 (300 keys) under a balanced plan, every partial row of
// the workspace filled, and the work list a test gives.
struct BalancedTwoRequests {
  problem::Batch batch = problem::Batch({0, 1, 3}, {0, 100, 400}, {}, 1, 400);
  problem::SplitPlan plan = problem::SplitPlan::balanced_over(4, 64, 2);
  gpu::WorkspaceLayout layout = gpu::workspace_layout(*problem::find_recipe("a16w16"), plan, 3, 2, 300);
  int64_t rows = plan.max_partial_rows(3, problem::kMaxQSeqLen, 300);  // the workspace's partial rows
  SchemaPartials read(const std::vector<int32_t>& item_start, const std::vector<int64_t>& part_start) const {
    std::vector<unsigned char> ws = filled(layout, rows);
    put(ws, layout.item_start, item_start);
    put(ws, layout.part_start, part_start);
    return schema_partials(batch, plan, layout, ws, false);
  }
};

TEST(CliWorkspacePartials, BalancedPlanRowsFollowTheWorkListAsChunkedOnes) {
  // Request 0: 1 piece; request 1: 3 pieces (rows 1 + i·3 + s).
  const SchemaPartials p = BalancedTwoRequests{}.read({0, 1, 4}, {0, 1, 7});
  ASSERT_EQ(p.splits, 3);
  expect_slot(p, 0, 0, 0);
  for (int64_t s = 1; s < 3; ++s) expect_slot(p, 0, s, -1);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t s = 0; s < 3; ++s) expect_slot(p, 1 + i, s, 1 + i * 3 + s);
}

TEST(CliWorkspacePartials, RowsPastTheWorkListsOwnEndAreReadWhereTheKernelWroteThem) {
  // The planted fault persistent-partials-unscaled: part_start not scaled by q_len (request 1's
  // q_len 2 x 3 rows from row 1 end at row 7, the list says 4). The capture reads rows 1 .. 6 as
  // the kernel wrote them, inside the workspace's partial rows (it crashed on the device reading
  // past the list's count: device run 4 of 2026-12-04).
  const SchemaPartials p = BalancedTwoRequests{}.read({0, 1, 4}, {0, 1, 4});
  ASSERT_EQ(p.splits, 3);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t s = 0; s < 3; ++s) expect_slot(p, 1 + i, s, 1 + i * 3 + s);
}

TEST(CliWorkspacePartials, AWorkListOutsideTheWorkspaceIsRefused) {
  const BalancedTwoRequests b;
  // Request 1's 2 x 3 rows would end one past the last row; a negative split count; a negative row.
  EXPECT_THROW(b.read({0, 1, 4}, {0, b.rows - 5, b.rows}), std::runtime_error);
  EXPECT_THROW(b.read({0, 1, 0}, {0, 1, 1}), std::runtime_error);
  EXPECT_THROW(b.read({0, 1, 4}, {0, -1, 5}), std::runtime_error);
  // The same list ending on the last row is read.
  EXPECT_NO_THROW(b.read({0, 1, 4}, {0, b.rows - 6, b.rows}));
}

TEST(CliWorkspacePartials, AMissingRegionIsRefused) {
  const problem::Batch batch({0, 1}, {0, 100}, {}, 1, 100);
  const problem::SplitPlan plan = problem::SplitPlan::uniform(2);
  gpu::WorkspaceLayout layout = gpu::workspace_layout(*problem::find_recipe("a16w16"), plan, 1, 1, 100);
  const std::vector<unsigned char> ws = filled(layout, 2);
  layout.part_lse = gpu::WorkspaceLayout::kAbsent;
  EXPECT_THROW(schema_partials(batch, plan, layout, ws, false), std::logic_error);
  EXPECT_TRUE(schema_partials(batch, problem::SplitPlan::uniform(0), layout, ws, false).out.empty());
}

}  // namespace
}  // namespace mlacheck::cli
