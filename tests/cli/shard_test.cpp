// `--shard i/n` (cli/shard.h): the parser every command uses, and the shares. gen uses round_robin,
// verify and bench cases_of_shard (balanced), so these tests cover all three; the commands'
// refusals and gen's files: check_shard_cli.py. Also CTest's GPU assignment (gpu/assigned_gpu.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/shard.h"
#include "gpu/assigned_gpu.h"

namespace mlacheck::cli {
namespace {

// Few TEST()s on purpose: CTest starts the binary once per test, 0.65 s each on the 2-core CI machine.
TEST(CliShard, ParsesIOverNAndRefusesWithTheRuleBroken) {
  for (const auto& [text, i, n] : std::vector<std::tuple<std::string, int, int>>{
           {"1/1", 1, 1}, {"2/4", 2, 4}, {"4/4", 4, 4}, {"10/12", 10, 12}, {"07/8", 7, 8}}) {
    const Shard s = parse_shard(text);
    EXPECT_EQ(s.index, i) << text;
    EXPECT_EQ(s.count, n) << text;
  }
  EXPECT_EQ(to_string(parse_shard("3/8")), "shard 3/8");

  // Each text with a piece of the message that must name its fault.
  const std::vector<std::pair<std::string, std::string>> bad{
      {"", "got nothing"},
      {"0/0", "n (the number of shards) must be >= 1"},
      {"1/0", "n (the number of shards) must be >= 1"},
      {"3/2", "i must be in 1..2"},
      {"0/3", "i must be in 1..3"},
      {"-1/2", "i must be decimal digits"},
      {"+1/2", "i must be decimal digits"},
      {" 1/2", "i must be decimal digits"},
      {"1/2x", "n must be decimal digits"},
      {"1/-2", "n must be decimal digits"},
      {"1/", "n is missing"},
      {"/2", "i is missing"},
      {"2", "is not i/n"},
      {"1/2/3", "is not i/n"},
      {"1/99999999999", "n is too large"},
  };
  for (const auto& [text, why] : bad) {
    try {
      parse_shard(text);
      ADD_FAILURE() << "'" << text << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
    }
  }
}

// Every unit in exactly one of the n shares, each share ascending.
void expect_partition(const std::vector<std::vector<std::size_t>>& shares, std::size_t units) {
  std::vector<int> seen(units, 0);
  for (const auto& share : shares) {
    EXPECT_TRUE(std::is_sorted(share.begin(), share.end()));
    for (const std::size_t k : share) {
      ASSERT_LT(k, units);
      ++seen[k];
    }
  }
  for (std::size_t k = 0; k < units; ++k) EXPECT_EQ(seen[k], 1) << "unit " << k;
}

TEST(CliShard, RoundRobinAndBalancedArePartitions) {
  // Round robin: unit k to shard k mod n + 1, sizes differing by one at most.
  for (std::size_t units = 0; units <= 40; ++units)
    for (int n = 1; n <= 10; ++n) {
      std::vector<std::vector<std::size_t>> shares;
      for (int i = 1; i <= n; ++i) {
        shares.push_back(round_robin(units, {i, n}));
        for (const std::size_t k : shares.back()) EXPECT_EQ(static_cast<int>(k % n), i - 1);
        for (std::size_t k = 0; k < units; ++k)
          EXPECT_EQ(round_robin_takes({i, n}, k),
                    std::find(shares.back().begin(), shares.back().end(), k) != shares.back().end());
        // units / n or one more, the first units mod n shards the larger.
        EXPECT_EQ(shares.back().size(), units / n + (static_cast<std::size_t>(i - 1) < units % n ? 1 : 0));
      }
      expect_partition(shares, units);
    }

  // Balanced: a partition whose totals differ by at most the largest cost.
  std::mt19937_64 rng(20240612);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t units = rng() % 41;
    const int n = 1 + static_cast<int>(rng() % 9);
    std::vector<double> costs(units);
    // Like a tier: mostly small cases and a few 1000x larger ones, some of cost 0 (kv_len 0).
    for (double& c : costs) c = rng() % 5 == 0 ? 1000.0 * (rng() % 100) : static_cast<double>(rng() % 100);
    std::vector<std::vector<std::size_t>> shares;
    std::vector<double> totals;
    for (int i = 1; i <= n; ++i) {
      shares.push_back(balanced(costs, {i, n}));
      double t = 0;
      for (const std::size_t k : shares.back()) t += costs[k];
      totals.push_back(t);
    }
    expect_partition(shares, units);
    const double largest = units ? *std::max_element(costs.begin(), costs.end()) : 0;
    EXPECT_LE(*std::max_element(totals.begin(), totals.end()) - *std::min_element(totals.begin(), totals.end()),
              largest)
        << "trial " << trial;
  }

  // Equal costs (0 included: empty cases) give round robin's shares.
  for (const double cost : {0.0, 1.0, 5e9})
    for (std::size_t units = 0; units <= 20; ++units)
      for (int n = 1; n <= 6; ++n)
        for (int i = 1; i <= n; ++i)
          EXPECT_EQ(balanced(std::vector<double>(units, cost), {i, n}), round_robin(units, {i, n}))
              << cost << " " << units << " " << i << "/" << n;
}

TEST(CliShard, BalancedSeparatesTheLargeCasesAndRefusesBadCosts) {
  // Large cases at every other position: round robin gives both to shard 1.
  const std::vector<double> costs{100, 1, 100, 1, 1, 1};
  EXPECT_EQ(round_robin(costs.size(), {1, 2}), (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(balanced(costs, {1, 2}), (std::vector<std::size_t>{0, 1, 4}));
  EXPECT_EQ(balanced(costs, {2, 2}), (std::vector<std::size_t>{2, 3, 5}));

  EXPECT_THROW(balanced(std::vector<double>{1, -1}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(balanced(std::vector<double>{1, std::nan("")}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(balanced(std::vector<double>{1, HUGE_VAL}, {1, 2}), std::invalid_argument);
}

TEST(CliShard, CasesOfAShardCoverTheListAndTheReportSaysSo) {
  std::vector<ref::CaseSpec> cases;
  for (const auto& [batch, kv_len, q_len] : std::vector<std::tuple<int, int, int>>{
           {4, 1024, 1}, {64, 8192, 1}, {2, 50, 4}, {128, 4096, 2}, {1, 0, 1}, {32, 1024, 1}, {6, 70, 1}}) {
    ref::CaseSpec c;
    c.batch = batch;
    c.kv_len = kv_len;
    c.q_len = q_len;
    c.name = "bs" + std::to_string(batch) + "_kv" + std::to_string(kv_len) + "_q" + std::to_string(q_len);
    cases.push_back(c);
  }
  // Query-key pairs plus 2500 keys' worth per query token (cli/shard.cpp).
  EXPECT_EQ(case_cost(cases[3]), 128.0 * 2 * (4096 + 2500));
  EXPECT_EQ(case_cost(cases[4]), 2500.0);
  EXPECT_GT(case_cost(cases[3]), case_cost(cases[1]));
  for (int n = 1; n <= 9; ++n) {
    std::vector<std::string> all;
    for (int i = 1; i <= n; ++i) {
      const std::vector<ref::CaseSpec> mine = cases_of_shard(cases, {i, n});
      std::vector<std::size_t> at;
      for (const ref::CaseSpec& c : mine) {
        all.push_back(c.name);
        at.push_back(static_cast<std::size_t>(
            std::find_if(cases.begin(), cases.end(), [&](const ref::CaseSpec& x) { return x.name == c.name; }) -
            cases.begin()));
      }
      EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << i << "/" << n;
    }
    std::sort(all.begin(), all.end());
    std::vector<std::string> want;
    for (const ref::CaseSpec& c : cases) want.push_back(c.name);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(all, want) << n << " shards";
  }
  // The two largest (bs128 q2, bs64) go to different shards of 2.
  const std::vector<ref::CaseSpec> first = cases_of_shard(cases, {1, 2});
  const auto has = [&](const std::string& name) {
    return std::any_of(first.begin(), first.end(), [&](const ref::CaseSpec& c) { return c.name == name; });
  };
  EXPECT_NE(has("bs64_kv8192_q1"), has("bs128_kv4096_q2"));

  EXPECT_EQ(shard_summary({2, 4}, 3, 11, "cases"), "shard 2/4: 3 of 11 cases");
  EXPECT_EQ(shard_summary({3, 8}, 0, 2, "cases"), "shard 3/8: no cases (only 2 for 8 shards)");
}

TEST(CliCtestGpu, ParsesTheAssignmentCtestWrites) {
  EXPECT_EQ(gpu::parse_ctest_gpus("id:0,slots:1"), "0");
  EXPECT_EQ(gpu::parse_ctest_gpus("id:13,slots:2"), "13");
  const std::vector<std::pair<std::string, std::string>> bad{
      {"", "not of the form"},
      {"id:0", "not of the form"},
      {"slots:1,id:0", "not of the form"},
      {"id:card0,slots:1", "not a device index"},
      {"id:,slots:1", "not a device index"},
      {"id:0,slots:0", "slots is not a number >= 1"},
      {"id:0,slots:x", "slots is not a number >= 1"},
      {"id:0,slots:1;id:1,slots:1", "more than one GPU"},
  };
  for (const auto& [value, why] : bad) {
    try {
      gpu::parse_ctest_gpus(value);
      ADD_FAILURE() << "'" << value << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << value << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("CTEST_RESOURCE_GROUP_0_GPUS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace mlacheck::cli
