#include "cli/workspace_partials.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "problem/shape.h"

namespace mlacheck::cli {
using problem::kNumHeads;
using problem::kVDim;

SchemaPartials schema_partials(const problem::Batch& batch, const problem::SplitPlan& plan,
                               const gpu::WorkspaceLayout& layout,
                               std::span<const unsigned char> workspace, bool base2) {
  SchemaPartials p;
  if (!plan.split_k()) return p;
  const int64_t B = batch.num_requests(), tokens = batch.total_q();
  std::vector<int64_t> split_count(static_cast<std::size_t>(B)), first_row(static_cast<std::size_t>(B));
  int64_t S = plan.num_splits, stored_rows = tokens * plan.num_splits;
  if (plan.chunk_keys > 0 || plan.is_balanced()) {  // the work list's layout
    // The rows the workspace holds (workspace_layout sizes them so), not the work list's own count
    // part[B]: the kernel wrote where the list pointed, and a wrong list (the planted fault
    // persistent-partials-unscaled) points past its own end. A list that points past the
    // workspace, or holds a negative count, is refused: read as it was, it crashed drift.
    stored_rows = plan.max_partial_rows(tokens, problem::kMaxQSeqLen, batch.max_kv_len());
    const auto item = workspace_region<int32_t>(workspace, layout.item_start, static_cast<std::size_t>(B) + 1);
    const auto part = workspace_region<int64_t>(workspace, layout.part_start, static_cast<std::size_t>(B) + 1);
    S = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t count = int64_t{item[b + 1]} - item[b], first = part[b];
      if (count < 0 || first < 0 || first > stored_rows - batch.q_len(b) * count)
        throw std::runtime_error("the workspace's work list puts request " + std::to_string(b) + "'s " +
                                 std::to_string(count) + " splits at partial row " + std::to_string(first) +
                                 ", outside the " + std::to_string(stored_rows) + " rows the workspace holds");
      split_count[static_cast<std::size_t>(b)] = count;
      first_row[static_cast<std::size_t>(b)] = first;
      S = std::max(S, count);
    }
  } else {
    for (int64_t b = 0; b < B; ++b) {
      split_count[static_cast<std::size_t>(b)] = S;
      first_row[static_cast<std::size_t>(b)] = batch.qo_indptr()[b] * S;
    }
  }
  const auto po = workspace_region<float>(workspace, layout.part_o, static_cast<std::size_t>(stored_rows) * kNumHeads * kVDim);
  const auto pl = workspace_region<float>(workspace, layout.part_lse, static_cast<std::size_t>(stored_rows) * kNumHeads);
  const auto slots = static_cast<std::size_t>(tokens * S);
  p.splits = S;
  p.out.assign(slots * kNumHeads * kVDim, 0.0f);
  p.lse.assign(slots * kNumHeads, -std::numeric_limits<float>::infinity());
  constexpr double kLn2 = 0.69314718055994530942;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < batch.q_len(b); ++i) {
      const int64_t t = batch.qo_indptr()[b] + i;
      const int64_t sb = split_count[static_cast<std::size_t>(b)];
      for (int64_t sp = 0; sp < sb; ++sp) {
        const int64_t row = first_row[static_cast<std::size_t>(b)] + i * sb + sp;
        const auto slot = static_cast<std::size_t>(t * S + sp);
        std::copy_n(po.begin() + row * kNumHeads * kVDim, kNumHeads * kVDim,
                    p.out.begin() + static_cast<std::ptrdiff_t>(slot * kNumHeads * kVDim));
        for (int h = 0; h < kNumHeads; ++h) {
          const float l = pl[static_cast<std::size_t>(row * kNumHeads + h)];
          p.lse[slot * kNumHeads + h] = base2 && std::isfinite(l) ? static_cast<float>(l * kLn2) : l;
        }
      }
    }
  return p;
}

}  // namespace mlacheck::cli
