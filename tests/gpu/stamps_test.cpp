// gpu/stamps.h: the spread of each point over the blocks (plain C++, every build), and on the device
// in a stamps build, that every hopper block stamps its points in the order it passes them.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cli/stamps_text.h"
#include "gpu/availability.h"
#include "gpu/registry.h"
#include "gpu/stamps.h"
#include "problem/recipe.h"
#include "tests/gpu/decode_cases.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#endif

namespace mlacheck::gpu {
namespace {

// One block's words: entry at `entry` cycles, each later cycle point `step` cycles after the one before
// (0 where not reached: points from `stop` on), entry_ns and exit_ns given.
std::vector<uint64_t> block(uint64_t entry, uint64_t step, StampPoint stop, uint64_t entry_ns, uint64_t exit_ns) {
  std::vector<uint64_t> w(kStampPoints, 0);
  for (int k = 0; k < static_cast<int>(StampPoint::entry_ns); ++k)
    if (k < static_cast<int>(stop)) w[k] = entry + step * static_cast<uint64_t>(k);
  w[static_cast<int>(StampPoint::entry_ns)] = entry_ns;
  w[static_cast<int>(StampPoint::exit_ns)] = exit_ns;
  return w;
}

const StampSpread& spread_of(const std::vector<StampSpread>& all, StampPoint p) {
  for (const StampSpread& s : all)
    if (s.point == p) return s;
  throw std::logic_error("no such point");
}

TEST(StampsSummary, CyclesCountFromEachBlocksOwnEntryAndNanosecondsFromTheFirstEntry) {
  std::vector<uint64_t> raw;
  // Three blocks on SMs whose counters differ widely; steps of 100, 200 and 300 cycles a point.
  for (const auto& b : {block(1'000'000, 100, StampPoint::count, 5'000, 9'000),
                        block(7, 200, StampPoint::count, 5'100, 9'500),
                        block(42'000, 300, StampPoint::count, 5'050, 9'200)})
    raw.insert(raw.end(), b.begin(), b.end());
  // A fourth slot that never ran (all zero): left out.
  raw.insert(raw.end(), kStampPoints, 0);
  const std::vector<StampSpread> s = summarize_stamps(raw);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(kStampPoints - 1)) << "every point but entry";
  const StampSpread& ready = spread_of(s, StampPoint::ready);
  EXPECT_EQ(ready.blocks, 3);
  EXPECT_EQ(ready.p10, 100);
  EXPECT_EQ(ready.median, 200);
  EXPECT_EQ(ready.p90, 300);
  const StampSpread& exit = spread_of(s, StampPoint::exit);
  EXPECT_EQ(exit.median, 200 * static_cast<int>(StampPoint::exit));
  const StampSpread& entry_ns = spread_of(s, StampPoint::entry_ns);
  EXPECT_EQ(entry_ns.p10, 0);
  EXPECT_EQ(entry_ns.median, 50);
  EXPECT_EQ(entry_ns.p90, 100);
  EXPECT_EQ(spread_of(s, StampPoint::exit_ns).p90, 4'500);
}

TEST(StampsSummary, APointSomeBlocksNeverReachedCountsOnlyThoseThatDid) {
  std::vector<uint64_t> raw;
  // A persistent block that took no work item stamps entry .. started and exit, nothing between.
  std::vector<uint64_t> idle = block(50, 10, StampPoint::q_staged, 1, 2);
  idle[static_cast<int>(StampPoint::exit)] = 50 + 90;
  for (const auto& b : {block(1, 10, StampPoint::count, 1, 2), idle})
    raw.insert(raw.end(), b.begin(), b.end());
  const std::vector<StampSpread> s = summarize_stamps(raw);
  EXPECT_EQ(spread_of(s, StampPoint::started).blocks, 2);
  EXPECT_EQ(spread_of(s, StampPoint::q_staged).blocks, 1);
  EXPECT_EQ(spread_of(s, StampPoint::q_staged).median, 30);
  EXPECT_EQ(spread_of(s, StampPoint::exit).blocks, 2);
  const std::string text = cli::stamps_text(s);
  EXPECT_NE(text.find("stamps of 2 blocks"), std::string::npos) << text;
  EXPECT_NE(text.find("q_staged 30 [30, 30] (1 blocks)"), std::string::npos) << text;
  EXPECT_EQ(cli::stamps_json(s)["q_staged"]["blocks"], 1);
  EXPECT_EQ(cli::stamps_json(s)["entry_ns"]["unit"], "ns");
}

// next_staged counts from the same block's merged (its first token's end), not from its entry; a
// block of one token has none.
TEST(StampsSummary, TheSecondTokensQCountsFromTheFirstTokensEnd) {
  std::vector<uint64_t> raw;
  std::vector<uint64_t> two = block(1'000, 10, StampPoint::count, 1, 2);  // next_staged 10 after merged
  std::vector<uint64_t> later = block(5'000, 10, StampPoint::count, 1, 2);
  later[static_cast<int>(StampPoint::next_staged)] = later[static_cast<int>(StampPoint::merged)] + 300;
  later[static_cast<int>(StampPoint::exit)] = later[static_cast<int>(StampPoint::next_staged)] + 10;
  std::vector<uint64_t> one = block(9'000, 10, StampPoint::count, 1, 2);
  one[static_cast<int>(StampPoint::next_staged)] = 0;
  for (const auto& b : {two, later, one}) raw.insert(raw.end(), b.begin(), b.end());
  const std::vector<StampSpread> s = summarize_stamps(raw);
  const StampSpread& next = spread_of(s, StampPoint::next_staged);
  EXPECT_EQ(next.blocks, 2);
  EXPECT_EQ(next.p10, 10);
  EXPECT_EQ(next.p90, 300);
  EXPECT_EQ(spread_of(s, StampPoint::merged).median, 10 * static_cast<int>(StampPoint::merged));
  EXPECT_NE(cli::stamps_text(s).find("next_staged (after merged) "), std::string::npos) << cli::stamps_text(s);
  EXPECT_EQ(cli::stamps_json(s)["next_staged"]["from"], "merged");
}

TEST(StampsSummary, NoBlockStampedSaysSo) {
  const std::vector<StampSpread> s = summarize_stamps(std::vector<uint64_t>(4 * kStampPoints, 0));
  for (const StampSpread& p : s) EXPECT_EQ(p.blocks, 0);
  EXPECT_NE(cli::stamps_text(s).find("stamps: none"), std::string::npos);
}

TEST(StampsSummary, RefusesPartialBlocksAndAStampBeforeItsEntry) {
  EXPECT_THROW(summarize_stamps(std::vector<uint64_t>(kStampPoints + 1, 1)), std::invalid_argument);
  std::vector<uint64_t> raw = block(1000, 10, StampPoint::count, 1, 2);
  raw[static_cast<int>(StampPoint::tiles_done)] = 999;  // another SM's counter, or another kernel's word
  EXPECT_THROW(summarize_stamps(raw), std::invalid_argument);
}

TEST(GpuKernelStamps, EveryHopperBlockStampsItsPointsInTheOrderItPassesThem) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
  if (!kernel_stamps_built()) GTEST_SKIP() << "built without the kernel stamps (-DMLACHECK_HOPPER_STAMPS=ON)";
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  int blocks_checked = 0, tokens_checked = 0, second_tokens = 0;
  // bf16 split-K (fused in a cluster where the case splits 2..8), the decoded and all-fp8 kernels,
  // and the persistent schedule (blocks that may take no item).
  for (const char* name : {"a16w16/split-k/hopper", "a16w8/split-k/hopper", "a8w8/split-k/hopper",
                           "a16w16/persistent/hopper"}) {
    const Strategy* s = find_strategy(name);
    ASSERT_NE(s, nullptr) << name;
    if (const auto missing = not_built_here(*s->family)) GTEST_SKIP() << *missing;
    test::for_each_supported_case(*s, [&](const ref::CaseSpec&, test::PreparedCase& c, const problem::KvCache& cache) {
      const ref::Inputs& in = c.inputs();
      DeviceProblem device(in.batch, in.q);
      const DecodeParams p = device.params(*s, cache);
      reset_kernel_stamps(device.stream());
      s->launch(p, device.stream());
      const std::vector<uint64_t> raw = read_kernel_stamps(device.stream());
      int stamped = 0;
      for (std::size_t b = 0; b < raw.size() / kStampPoints; ++b) {
        const uint64_t* w = raw.data() + b * kStampPoints;
        if (w[static_cast<int>(StampPoint::entry)] == 0) continue;
        ++stamped;
        SCOPED_TRACE("block " + std::to_string(b));
        for (const StampPoint must : {StampPoint::ready, StampPoint::started, StampPoint::exit, StampPoint::entry_ns,
                                      StampPoint::exit_ns})
          EXPECT_NE(w[static_cast<int>(must)], 0u) << stamp_point_name(must);
        // A token's points: all or none (a persistent block may take no item); the decoded kernels'
        // own (the warpgroups' exchange) in those kernels only.
        const bool token = w[static_cast<int>(StampPoint::q_staged)] != 0;
        const bool decoded = s->recipe.kv != problem::KvFormat::bf16;
        for (int k = static_cast<int>(StampPoint::q_staged); k <= static_cast<int>(StampPoint::merged); ++k) {
          const auto point = static_cast<StampPoint>(k);
          const bool decoded_only = point == StampPoint::halves_met;
          EXPECT_EQ(w[k] != 0, token && (decoded || !decoded_only)) << stamp_point_name(point);
        }
        tokens_checked += token ? 1 : 0;
        // The second token's Q: only after a first one (the q_len 4 cases give split-K blocks several).
        const bool second = w[static_cast<int>(StampPoint::next_staged)] != 0;
        EXPECT_TRUE(token || !second);
        second_tokens += second ? 1 : 0;
        uint64_t last = 0;
        for (int k = 0; k <= static_cast<int>(StampPoint::exit); ++k) {
          if (w[k] == 0) continue;
          EXPECT_GE(w[k], last) << stamp_point_name(static_cast<StampPoint>(k)) << " before the point ahead of it";
          last = w[k];
        }
        EXPECT_GE(w[static_cast<int>(StampPoint::exit_ns)], w[static_cast<int>(StampPoint::entry_ns)]);
      }
      EXPECT_GT(stamped, 0) << "no block stamped";
      blocks_checked += stamped;
      EXPECT_NO_THROW(summarize_stamps(raw));
    });
  }
  EXPECT_GT(tokens_checked, 0);
  EXPECT_GT(second_tokens, 0) << "no block stamped its second token's Q";
  EXPECT_GT(blocks_checked, 0);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
