#pragma once
// `--shard i/n` of `gen`, `verify` and `bench` (issue 12 item 6): one of n machines takes a
// deterministic share of the units (cases), so that a CI matrix of n jobs covers every unit exactly
// once. i counts from 1 (1 <= i <= n), as CI matrices and "shard 3 of 8" do.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ref/case_spec.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace mlacheck::cli {

struct Shard {
  int index = 1;  // i, 1..count
  int count = 1;  // n >= 1
};

// "i/n": decimal digits only (no sign, space or other character), n >= 1, 1 <= i <= n. Throws
// std::invalid_argument saying which rule the text breaks (CLI11 puts "--shard: " before it).
Shard parse_shard(std::string_view text);

// "shard 2/4"
std::string to_string(const Shard& shard);

// The positions (ascending, i.e. in list order) of the units that `shard` takes, unit k going to
// shard (k mod n) + 1: shards differ in size by at most one unit.
std::vector<std::size_t> round_robin(std::size_t units, const Shard& shard);
// The same rule for one unit, for a loop that learns the number of units as it goes.
bool round_robin_takes(const Shard& shard, std::size_t k);

// The positions (ascending) that `shard` takes when the units cost `costs` (finite estimates >= 0):
// the greedy "longest processing time" rule, largest first, each to the shard with the smallest
// total so far (ties: fewer units, then the lower shard; equal costs keep list order). The largest
// total is within 4/3 of the best split's (Graham 1969), two shards' totals differ by at most the
// largest cost, and equal costs give round_robin's shares.
std::vector<std::size_t> balanced(std::span<const double> costs, const Shard& shard);

// `verify` and `bench`: the cases of `shard` (in list order), balanced by case_cost. A case is the
// unit, not a (case, strategy) pair: its inputs and exact reference are made once for all
// strategies.
std::vector<ref::CaseSpec> cases_of_shard(const std::vector<ref::CaseSpec>& cases, const Shard& shard);

// What a case costs `verify`, in keys: batch x q_len x (kv_len + 2500). The query-key pairs (the
// exact and emulated references on the CPU, the kernels) plus a fixed cost per query token,
// measured to weigh as much as 2500 keys (cli/shard.cpp).
// kv_len is the longest length of a ragged case: an upper bound. On a large tier the largest cases
// dominate a run.
double case_cost(const ref::CaseSpec& spec);
// "batch x q_len x (kv_len + 2500)", for the reports and the help.
std::string case_cost_rule();

// Adds `--shard i/n` to `command`, parsed by parse_shard (a malformed value is a usage error, exit
// 2); `units` says what is shared out, for the help text.
CLI::Option* add_shard_option(CLI::App& command, std::optional<Shard>& shard, std::string_view units);

// The report's line: "shard 2/4: 3 of 11 cases" or "shard 3/8: no cases (only 2 for 8 shards)".
std::string shard_summary(const Shard& shard, std::size_t taken, std::size_t total,
                          std::string_view units);

}  // namespace mlacheck::cli
