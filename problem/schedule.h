#pragma once
// How a kernel cut one decode's work, as a user declares it (`--schedule`) and the emulated
// reference replays it (DESIGN.md "Judging other people's kernels"): the split-K ranges of each
// request and the keys per online-softmax step. Host only; the GPU schedules use the subset in
// problem/split_plan.h, which converts to this (from_plan).
//
// Spelling: comma-separated items, one of the split kinds and optionally a tile:
//   single            no split-K: one pass over each request's keys (the default kind)
//   splits=N          every request cut into N ranges of ceil(L / N) keys (trailing ones may be
//                     empty): the seeds' and sglang's kv_per_split = cdiv(L, NUM_SPLITS)
//   split-len=K       ranges of K keys from key 0 ([0, K), [K, 2K), ...; the last one shorter)
//   chunk=K           mlacheck's persistent plan (problem/split_plan.h): S = ceil(L / K) ranges
//                     of ceil(L / S) keys
//   balanced=B/U/O    mlacheck's balanced plan (problem/split_plan.h namespace balanced): the
//                     batch laid on one cost axis (request b costs O + ceil(L_b / U) units of U
//                     keys) and cut into B equal shares; a request is cut where a share ends.
//                     With fewer requests than B, the one-piece cut where it is taken
//                     (balanced::one_piece): each request cut evenly into pieces of at most P
//                     units, P the least that makes at most B pieces in all.
//                     B in 1 .. kMaxPlanSplits, U >= 1, O >= 0. A request's ranges depend on
//                     the whole batch: ask BatchSplits, not Schedule::ranges
//   table=FILE        per-request split boundaries, as a scheduler like FlashMLA's makes: line b
//                     (blank lines and '#' comments skipped) lists request b's split start keys,
//                     increasing, the first 0 (an empty request: "0" or nothing)
//   tile=T            T keys per online-softmax step inside a split (P is rounded against the
//                     running max of the keys seen so far); default: one step over the split
// e.g. "splits=16,tile=64", "single,tile=32", "split-len=512", "balanced=132/64/2,tile=64".
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "problem/split_plan.h"

namespace mlacheck::problem {

struct KeyRange {
  int64_t begin = 0, end = 0;  // keys [begin, end) of one request
};

struct Schedule {
  enum class Kind : uint8_t { single, splits, split_len, chunk, table, balanced };
  Kind kind = Kind::single;
  int64_t count = 0;  // splits (N), split-len (K) or chunk (K); unused otherwise
  std::vector<std::vector<int64_t>> table;  // per request: split start keys (kind table)
  std::string table_source;                 // the file it came from, for messages
  int softmax_tile = 0;                     // 0 = one step per split
  // Kind balanced: SplitPlan::balanced_over(balanced_blocks, unit_keys, overhead_units).
  int balanced_blocks = 0;
  int unit_keys = 0;
  int overhead_units = 0;

  static Schedule single(int tile = 0) { return {Kind::single, 0, {}, {}, tile}; }
  static Schedule uniform(int splits, int tile = 0) { return {Kind::splits, splits, {}, {}, tile}; }
  static Schedule balanced(int blocks, int unit_keys, int overhead_units, int tile = 0) {
    return {Kind::balanced, 0, {}, {}, tile, blocks, unit_keys, overhead_units};
  }
  // The GPU's plan (split_plan.h) with the strategy's softmax step.
  static Schedule from_plan(const SplitPlan& plan, int tile);

  bool split_k() const { return kind != Kind::single; }
  // The split ranges of request b with `len` keys, in order (single: one range [0, len)). An
  // empty request gives one empty range. Throws ProblemError where a table does not fit, and for
  // a balanced schedule, whose ranges depend on the whole batch (BatchSplits answers those).
  std::vector<KeyRange> ranges(int64_t b, int64_t len) const;
  // The most ranges any request of at most max_len keys (num_requests requests) gets (balanced:
  // at most one per block and one per unit, min(B, max(1, ceil(max_len / U)))).
  int64_t max_ranges(int64_t num_requests, int64_t max_len) const;
  // Checks the schedule against a batch's lengths: a table needs one line per request whose
  // boundaries lie inside it. Throws ProblemError naming the request.
  void check_fits(std::span<const int32_t> kv_indptr) const;

  bool operator==(const Schedule&) const = default;
};

// The split ranges of every request of one batch, for any kind: a balanced schedule's cuts are
// precomputed from the batch's lengths (every A_b and the share Q, O(B)), the others delegate to
// Schedule::ranges. Keeps a pointer to `schedule`, which must outlive it. Throws ProblemError for
// a balanced schedule with B outside 1 .. kMaxPlanSplits, U < 1 or O < 0.
class BatchSplits {
 public:
  BatchSplits(const Schedule& schedule, std::span<const int32_t> kv_indptr);
  int64_t num_requests() const { return static_cast<int64_t>(len_.size()); }
  // Request b's ranges, in order: contiguous from key 0 to its length (an empty request: one
  // empty range). Throws ProblemError for b outside the batch or where a table does not fit.
  std::vector<KeyRange> ranges(int64_t b) const;
  // The most ranges a request of this batch gets (at least 1): what a split-K pass needs room for.
  int64_t max_ranges() const { return max_ranges_; }

 private:
  const Schedule* schedule_;
  std::vector<int64_t> len_;         // keys of each request
  std::vector<int64_t> unit_start_;  // balanced: A_b, where request b's units start
  int64_t share_ = 0;                // balanced: Q
  int64_t one_piece_size_ = 0;       // balanced under the one-piece cut: P (else 0)
  int64_t max_ranges_ = 1;
};

// Parses the spelling above; table files are read here (a regular file of at most
// kMaxScheduleFileBytes). Throws ProblemError with what is wrong.
Schedule parse_schedule(std::string_view spelling);
inline constexpr std::size_t kMaxScheduleFileBytes = 16u << 20;
// The canonical spelling ("splits=16,tile=64"; a table prints as table=<its source>).
std::string to_string(const Schedule&);

}  // namespace mlacheck::problem
