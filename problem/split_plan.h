#pragma once
// How each request's keys are cut into split-K ranges (ref/decode_emulated.h step 2): the one
// definition the emulated reference and the GPU schedules share (host + device), header only.
#include <compare>
#include <cstdint>

#include "quant/hd.h"

namespace mlacheck::problem {

// The merge's limit on splits per request (its weight array).
inline constexpr int kMaxPlanSplits = 256;

// The balanced plan's arithmetic (SplitPlan::balanced), host and device alike. The batch is laid
// out on one cost axis in request order: request b costs overhead + T_b units (T_b = ceil(L_b /
// unit_keys)), its overhead first, then its units; its units start at A_b = (b + 1) · overhead +
// Σ_{b' < b} T_b'. The axis is cut into `blocks` equal shares of Q units (the last one shorter); a
// cut that falls strictly inside a request's units splits it there, a cut in its overhead does not.
// So every block gets Q units of cost, whole units of keys, and a request is cut only where a block
// ends: at most B + blocks - 1 pieces in all (FlashMLA's decode metadata cuts its batch the same
// way; its overhead and rounding differ).
namespace balanced {

MLACHECK_HD constexpr int64_t units_of(int64_t kv_len, int64_t unit_keys) {
  return (kv_len + unit_keys - 1) / unit_keys;
}
// Q = max(ceil(total_cost / blocks), overhead + 1): more than one request's overhead, so that every
// share boundary inside a request's cost interval starts a piece of that request (gpu work list).
MLACHECK_HD constexpr int64_t share(int64_t total_cost, int64_t blocks, int64_t overhead) {
  const int64_t q = (total_cost + blocks - 1) / blocks;
  return q > overhead + 1 ? q : overhead + 1;
}
// Each function below that divides A by Q has a `_from` twin taking a_share = A / Q (the share the
// request's units start in): the plan kernel divides once a request, not three times a piece (a
// 64-bit division is a software routine on the GPU; a thread's request of 14 pieces was a chain of
// about 40 of them: the plan kernel at ragged_bs32_kv4096 took 13.6 µs, now 9.2, docs/PERF.md,
// device call 8 of 2026-12-06's twentieth session). The plain forms are the `_from` forms with
// A / Q, so both give the same numbers.
// Pieces of a request whose T units start at A: 1 + the share boundaries j·Q with A < j·Q < A + T.
MLACHECK_HD constexpr int64_t pieces_from(int64_t a, int64_t a_share, int64_t t, int64_t q) {
  return t <= 1 ? 1 : 1 + (a + t - 1) / q - a_share;
}
MLACHECK_HD constexpr int64_t pieces(int64_t a, int64_t t, int64_t q) { return pieces_from(a, a / q, t, q); }
// The first unit of piece s (0 for s = 0, else where its cut falls), relative to the request.
MLACHECK_HD constexpr int64_t piece_first_unit_from(int64_t a, int64_t a_share, int64_t s, int64_t q) {
  return s == 0 ? 0 : (a_share + s) * q - a;
}
MLACHECK_HD constexpr int64_t piece_first_unit(int64_t a, int64_t s, int64_t q) {
  return piece_first_unit_from(a, a / q, s, q);
}
// The keys of piece s of a request of `pieces` pieces and len keys whose units start at A: from its
// first unit to the next piece's (the last: to len), in keys, clipped to len. The one definition the
// emulation (problem/schedule.cpp), the plan kernel and the hopper kernel's work items share.
struct PieceKeys {
  int64_t first = 0, end = 0;
};
MLACHECK_HD constexpr PieceKeys piece_keys_from(int64_t a, int64_t a_share, int64_t s, int64_t pieces, int64_t q,
                                                int64_t unit_keys, int64_t len) {
  const int64_t from = piece_first_unit_from(a, a_share, s, q) * unit_keys;
  const int64_t to = s + 1 < pieces ? piece_first_unit_from(a, a_share, s + 1, q) * unit_keys : len;
  return {from < len ? from : len, to < len ? to : len};
}
MLACHECK_HD constexpr PieceKeys piece_keys(int64_t a, int64_t s, int64_t pieces, int64_t q, int64_t unit_keys,
                                           int64_t len) {
  return piece_keys_from(a, a / q, s, pieces, q, unit_keys, len);
}
// The block that runs piece s: the share holding its first unit (an empty request's one piece: the
// share holding the start of its overhead, or with no overhead the unit before it, so that an empty
// request at the axis' end, a = blocks · Q, still has a block). Non-decreasing along the batch's
// pieces in order.
MLACHECK_HD constexpr int64_t piece_block_from(int64_t a, int64_t a_share, int64_t t, int64_t s, int64_t q,
                                               int64_t overhead) {
  if (t > 0) return a_share + s;
  return a > 0 ? (a - (overhead > 0 ? overhead : 1)) / q : 0;
}
MLACHECK_HD constexpr int64_t piece_block(int64_t a, int64_t t, int64_t s, int64_t q, int64_t overhead) {
  return piece_block_from(a, a / q, t, s, q, overhead);
}

// The one-piece cut, the balanced plan's form for batches of fewer requests than blocks: every
// block runs one piece. P = the least piece size (units) with Σ_b pieces(T_b, P) <= blocks; request
// b is cut evenly into pieces(T_b, P) pieces of ceil(T_b / pieces) units (none empty: (n - 1) · per
// <= (n - 1) · P < T_b), piece k of the batch in order running on block k. Taken where P <= Q, the
// share the equal cut gives a block (units, overheads included), as the busiest block then gets at
// most as many tiles, in one piece instead of up to two: ragged_bs32_kv4096's 454 tiles as 129
// pieces of at most 4 tiles where the equal cut's busiest blocks get 5 (docs/HOPPER.md, the ragged
// section). A batch of as many requests as blocks or more never takes it (P undefined).
namespace one_piece {

// Pieces of a request of t units in pieces of at most p units (an empty request: one). A template
// so that the plan kernel divides in 32 bits (units and pieces of an int32 length fit; a 64-bit
// division is a software routine on the GPU, namespace balanced's `_from` forms say what it cost).
template <typename Int>
MLACHECK_HD constexpr Int pieces(Int t, Int p) {
  return t <= p ? Int{1} : (t + p - 1) / p;
}
// The units of each of a request's n pieces but the last: ceil(t / n) (the last has the rest).
template <typename Int>
MLACHECK_HD constexpr Int piece_units(Int t, Int n) {
  return (t + n - 1) / n;
}
// The bracket of P for U units over B < blocks requests: at least ceil(U / blocks) (and 1), and
// ceil(U / (blocks - B)) suffices, as pieces(T, P) <= T / P + 1, so Σ <= U / P + B <= blocks.
MLACHECK_HD constexpr int64_t least_size_low(int64_t units, int64_t blocks) {
  const int64_t p = (units + blocks - 1) / blocks;
  return p > 1 ? p : 1;
}
MLACHECK_HD constexpr int64_t least_size_high(int64_t units, int64_t blocks, int64_t requests) {
  const int64_t p = (units + blocks - requests - 1) / (blocks - requests);
  const int64_t low = least_size_low(units, blocks);
  return p > low ? p : low;
}
// Piece s of n of a request of len keys cut in pieces of per = piece_units(t, n) units: the even
// cut, in keys, clipped to len (no division: per is the request's, found once).
MLACHECK_HD constexpr PieceKeys piece_keys(int64_t per, int64_t s, int64_t n, int64_t unit_keys, int64_t len) {
  const int64_t from = s * per * unit_keys;
  const int64_t to = s + 1 < n ? (s + 1) * per * unit_keys : len;
  return {from < len ? from : len, to < len ? to : len};
}
// Whether a batch whose least piece size is p takes the one-piece cut, beside the equal cut's share q.
MLACHECK_HD constexpr bool taken(int64_t requests, int64_t blocks, int64_t p, int64_t q) {
  return requests < blocks && p <= q;
}

}  // namespace one_piece

}  // namespace balanced

struct SplitPlan {
  // Uniform: every request is cut into num_splits ranges of ceil(L / num_splits) keys (trailing
  // ranges may be empty); 0 = no split-K (a single pass).
  int num_splits = 0;
  // Chunked (when > 0): request b is cut into S_b = clamp(ceil(L_b / chunk_keys), 1,
  // kMaxPlanSplits) ranges of ceil(L_b / S_b) keys, so that every range of every request has at
  // most chunk_keys keys (a balanced work list for ragged batches). num_splits is then unused.
  int chunk_keys = 0;
  // Balanced (when balanced_blocks > 0): the batch cut into balanced_blocks equal shares of cost
  // (namespace balanced above), block i running the pieces of share i in order; a request of one
  // piece is not split (no merge). unit_keys: keys per cost unit (the kernel's tile);
  // overhead_units: a request's fixed cost. A batch of fewer requests than blocks may take the
  // one-piece cut instead (namespace balanced::one_piece: every block one piece). The cuts depend on
  // every request's length, so a request's ranges need the whole batch (problem/schedule.h
  // BatchSplits).
  int balanced_blocks = 0;
  int unit_keys = 0;
  int overhead_units = 0;

  MLACHECK_HD static constexpr SplitPlan uniform(int splits) { return {splits, 0}; }
  MLACHECK_HD static constexpr SplitPlan chunked(int keys) { return {0, keys}; }
  MLACHECK_HD static constexpr SplitPlan balanced_over(int blocks, int unit_keys, int overhead_units) {
    return {0, 0, blocks, unit_keys, overhead_units};
  }

  MLACHECK_HD constexpr bool is_balanced() const { return balanced_blocks > 0; }
  MLACHECK_HD constexpr bool split_k() const { return chunk_keys > 0 || num_splits > 0 || is_balanced(); }
  // The split count of a request with kv_len keys: 0 without split-K (uniform and chunked plans;
  // a balanced plan's counts depend on the whole batch).
  MLACHECK_HD constexpr int splits_of(int64_t kv_len) const {
    if (chunk_keys <= 0) return num_splits;
    const int64_t s = (kv_len + chunk_keys - 1) / chunk_keys;
    return s < 1 ? 1 : s > kMaxPlanSplits ? kMaxPlanSplits : static_cast<int>(s);
  }
  // The most splits any request can get (bounds buffers): uniform num_splits, chunked the cap
  // for requests of at most max_kv_len keys, balanced at most one piece per block and per unit.
  MLACHECK_HD constexpr int max_splits(int64_t max_kv_len) const {
    if (is_balanced()) {
      const int64_t units = balanced::units_of(max_kv_len, unit_keys);
      const int64_t most = units < 1 ? 1 : units;
      return most < balanced_blocks ? static_cast<int>(most) : balanced_blocks;
    }
    return chunk_keys > 0 ? splits_of(max_kv_len) : num_splits;
  }
  // The most splits a request of this batch can get, from its sizes alone (the host knows no single
  // length): uniform and chunked as max_splits; balanced, a request of T units has at most
  // 2 + (T - 1) / Q pieces, and Q is at least the share computed with the batch's keys in whole
  // units (Σ ceil(L_b / u) >= ceil(Σ L_b / u), and share() grows with the cost); under the one-piece
  // cut (fewer requests than blocks) at most ceil(T / P) with P at least ceil(U / blocks) of those
  // units; capped by max_splits. Picks the merge kernel's instance (gpu/common/merge.hip): a bound,
  // not the count.
  MLACHECK_HD constexpr int most_splits(int64_t max_kv_len, int64_t total_kv, int64_t num_requests) const {
    const int cap = max_splits(max_kv_len);
    if (!is_balanced()) return cap;
    const int64_t t = balanced::units_of(max_kv_len, unit_keys);
    if (t <= 1) return 1;
    const int64_t units = balanced::units_of(total_kv, unit_keys);
    const int64_t q = balanced::share(num_requests * overhead_units + units, balanced_blocks, overhead_units);
    int64_t most = 2 + (t - 1) / q;
    if (num_requests < balanced_blocks) {
      const int64_t one = balanced::one_piece::pieces(t, balanced::one_piece::least_size_low(units, balanced_blocks));
      most = one > most ? one : most;
    }
    return most < cap ? static_cast<int>(most) : cap;
  }
  // Partial rows (token, split) a batch of total_q tokens of at most max_q_len each can need:
  // balanced plans T + max_q_len · (blocks - 1) (each cut adds one piece to one request), others
  // T · max_splits.
  MLACHECK_HD constexpr int64_t max_partial_rows(int64_t total_q, int64_t max_q_len, int64_t max_kv_len) const {
    if (is_balanced()) return total_q + max_q_len * (balanced_blocks - 1);
    return total_q * max_splits(max_kv_len);
  }
  // Every field, so that a cache of emulations keyed on a plan (cmd_verify, the GPU decode tests)
  // cannot take one plan's result for another's.
  constexpr auto operator<=>(const SplitPlan&) const = default;
};

}  // namespace mlacheck::problem
