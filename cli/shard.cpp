#include "cli/shard.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace mlacheck::cli {
namespace {

// What one query token costs `verify` beyond its keys, in keys: a least-squares fit of the wall
// time of `verify --tier standard --case C` for each of the 24 cases on the H200 (28 strategies;
// the empty case's 0.46 s of start-up taken off) gave 7.5 us per query-key pair and 18.8 ms per
// query token (what an output row costs apart from its keys), i.e. 2525 keys; the fit is within
// 0.9 s of every case. Pairs alone made bs256_kv1024 (7.2 s) half as costly as
// bs64_kv8192 (5.9 s).
constexpr double kKeysPerQueryToken = 2500;

constexpr std::string_view kForm = "i/n, two decimal numbers with 1 <= i <= n (e.g. 2/4)";

// One side of "i/n": digits only, so that "-1", "+1", " 1" and "1x" are refused, not read as
// something else (std::from_chars alone accepts a leading '-' and stops at the first non-digit).
int side(std::string_view digits, std::string_view text, std::string_view which) {
  if (digits.empty())
    throw std::invalid_argument(fmt::format("'{}': {} is missing; give {}", text, which, kForm));
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::invalid_argument(
        fmt::format("'{}': {} must be decimal digits 0-9 only; give {}", text, which, kForm));
  int value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc{} || end != digits.data() + digits.size())
    throw std::invalid_argument(fmt::format("'{}': {} is too large", text, which));
  return value;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  if (text.empty()) throw std::invalid_argument(fmt::format("needs {}, got nothing", kForm));
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos)
    throw std::invalid_argument(fmt::format("'{}' is not {}", text, kForm));
  const Shard s{side(text.substr(0, slash), text, "i"), side(text.substr(slash + 1), text, "n")};
  if (s.count < 1)
    throw std::invalid_argument(fmt::format("'{}': n (the number of shards) must be >= 1", text));
  if (s.index < 1 || s.index > s.count)
    throw std::invalid_argument(
        fmt::format("'{}': i must be in 1..{} (shards count from 1)", text, s.count));
  return s;
}

std::string to_string(const Shard& shard) { return fmt::format("shard {}/{}", shard.index, shard.count); }

bool round_robin_takes(const Shard& shard, std::size_t k) {
  return k % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index - 1);
}

std::vector<std::size_t> round_robin(std::size_t units, const Shard& shard) {
  std::vector<std::size_t> taken;
  for (std::size_t k = 0; k < units; ++k)
    if (round_robin_takes(shard, k)) taken.push_back(k);
  return taken;
}

std::vector<std::size_t> balanced(std::span<const double> costs, const Shard& shard) {
  for (const double c : costs)
    if (!(c >= 0) || c == std::numeric_limits<double>::infinity())
      throw std::invalid_argument("shard cost estimates must be finite and >= 0");
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest first; equal costs keep list order, so the result depends on the list alone.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  struct Load {
    double cost = 0;
    std::size_t units = 0;
  };
  std::vector<Load> load(static_cast<std::size_t>(shard.count));
  std::vector<std::size_t> taken;
  for (const std::size_t k : order) {
    std::size_t to = 0;
    for (std::size_t s = 1; s < load.size(); ++s)
      if (load[s].cost < load[to].cost || (load[s].cost == load[to].cost && load[s].units < load[to].units))
        to = s;
    load[to].cost += costs[k];
    ++load[to].units;
    if (to == static_cast<std::size_t>(shard.index - 1)) taken.push_back(k);
  }
  std::sort(taken.begin(), taken.end());
  return taken;
}

double case_cost(const ref::CaseSpec& spec) {
  // In double: 2^31 x 4 x (2^31 + ...) would overflow int64_t (a case list may say so; the memory
  // estimate refuses such a case later). An estimate needs no exactness, and IEEE sums in a fixed
  // order give the same shares on every machine.
  return static_cast<double>(spec.batch) * spec.q_len * (static_cast<double>(spec.kv_len) + kKeysPerQueryToken);
}

std::string case_cost_rule() { return fmt::format("batch x q_len x (kv_len + {:.0f})", kKeysPerQueryToken); }

std::vector<ref::CaseSpec> cases_of_shard(const std::vector<ref::CaseSpec>& cases, const Shard& shard) {
  std::vector<double> costs;
  for (const ref::CaseSpec& c : cases) costs.push_back(case_cost(c));
  std::vector<ref::CaseSpec> taken;
  for (const std::size_t k : balanced(costs, shard)) taken.push_back(cases[k]);
  return taken;
}

CLI::Option* add_shard_option(CLI::App& command, std::optional<Shard>& shard, std::string_view units) {
  return command
      .add_option_function<std::string>(
          "--shard", [&shard](const std::string& text) { shard = parse_shard(text); },
          fmt::format("take shard i of n (1 <= i <= n) of the {}: deterministic, disjoint, the n "
                      "shards together take each exactly once",
                      units))
      ->type_name("i/n")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            try {
              parse_shard(text);
              return {};
            } catch (const std::invalid_argument& e) {
              return e.what();
            }
          },
          ""));  // no description: the type name already says i/n
}

std::string shard_summary(const Shard& shard, std::size_t taken, std::size_t total,
                          std::string_view units) {
  if (taken == 0)
    return fmt::format("{}: no {} (only {} for {} shards)", to_string(shard), units, total, shard.count);
  return fmt::format("{}: {} of {} {}", to_string(shard), taken, total, units);
}

}  // namespace mlacheck::cli
