#pragma once
// A balanced split plan (problem/split_plan.h) worked out unit by unit along the batch's cost axis:
// each request's overhead, then its units, a piece starting at its first unit and at every other
// unit that begins a share. With fewer requests than blocks, the one-piece cut where it is taken:
// P found by trying 1, 2, ... until the pieces fit the blocks, taken when P <= Q; each request's
// units walked in runs of ceil(T / n), piece k on block k. Its definition, not the closed forms of
// namespace balanced, so that the tests of the emulation (tests/ref) and of the device's work list
// (tests/gpu) check those forms against something independent of them.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace mlacheck::testing {

struct BalancedWalk {
  int64_t share = 0;                                // Q
  int64_t one_piece_size = 0;                       // P where the one-piece cut is taken, else 0
  std::vector<std::vector<int64_t>> piece_first;    // per request: its pieces' first keys
  std::vector<int64_t> piece_request, piece_block;  // every piece, in order
};

inline BalancedWalk walk_balanced(std::span<const int64_t> lengths, int64_t blocks, int64_t unit,
                                  int64_t overhead) {
  BalancedWalk w;
  int64_t total = 0;
  for (const int64_t len : lengths) total += overhead + (len + unit - 1) / unit;
  w.share = std::max<int64_t>((total + blocks - 1) / blocks, overhead + 1);
  const auto requests = static_cast<int64_t>(lengths.size());
  const auto units_of = [&](int64_t len) { return (len + unit - 1) / unit; };
  const auto pieces_of = [](int64_t t, int64_t p) { return std::max<int64_t>(1, (t + p - 1) / p); };
  if (requests < blocks) {
    int64_t p = 1;
    for (;; ++p) {
      int64_t pieces = 0;
      for (const int64_t len : lengths) pieces += pieces_of(units_of(len), p);
      if (pieces <= blocks) break;
    }
    if (p <= w.share) w.one_piece_size = p;
  }
  if (w.one_piece_size > 0) {
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const int64_t t = units_of(lengths[b]), n = pieces_of(t, w.one_piece_size), per = (t + n - 1) / n;
      std::vector<int64_t>& firsts = w.piece_first.emplace_back();
      for (int64_t u = 0; u < std::max<int64_t>(t, 1); ++u) {
        if (per > 0 && u % per != 0) continue;
        firsts.push_back(u * unit);
        w.piece_request.push_back(static_cast<int64_t>(b));
        w.piece_block.push_back(static_cast<int64_t>(w.piece_block.size()));
      }
    }
    return w;
  }
  int64_t pos = 0;
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const int64_t cost_start = pos;
    pos += overhead;
    std::vector<int64_t>& firsts = w.piece_first.emplace_back();
    const auto add = [&](int64_t first_key, int64_t block) {
      firsts.push_back(first_key);
      w.piece_request.push_back(static_cast<int64_t>(b));
      w.piece_block.push_back(block);
    };
    if (lengths[b] == 0)  // its overhead's first unit, or without overhead the unit before it
      add(0, overhead > 0 ? cost_start / w.share : (pos > 0 ? (pos - 1) / w.share : 0));
    for (int64_t u = 0; u * unit < lengths[b]; ++u, ++pos)
      if (u == 0 || pos % w.share == 0) add(u * unit, pos / w.share);
  }
  return w;
}

}  // namespace mlacheck::testing
