// gpu/stamps.h's plain C++ side: whether this build stamps, and the spread of each point over the
// blocks (the device side is in gpu/hopper/attention.hip, beside the kernel that writes them).
#include "gpu/stamps.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mlacheck::gpu {

bool kernel_stamps_built() {
#if defined(MLACHECK_HOPPER_STAMPS)
  return true;
#else
  return false;
#endif
}

namespace {

// Nearest-rank percentile of a sorted, non-empty sample (cli/cmd_bench.cpp's rule for times).
int64_t at_rank(const std::vector<int64_t>& sorted, double q) {
  const auto i = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

std::vector<StampSpread> summarize_stamps(const std::vector<uint64_t>& raw) {
  if (raw.size() % kStampPoints != 0)
    throw std::invalid_argument("kernel stamps: " + std::to_string(raw.size()) + " words are not whole blocks of " +
                                std::to_string(kStampPoints));
  const std::size_t blocks = raw.size() / kStampPoints;
  const auto word = [&](std::size_t b, StampPoint p) { return raw[b * kStampPoints + static_cast<std::size_t>(p)]; };
  // The earliest entry on the global timer: the ns points' origin.
  uint64_t first_entry_ns = UINT64_MAX;
  for (std::size_t b = 0; b < blocks; ++b)
    if (word(b, StampPoint::entry) != 0 && word(b, StampPoint::entry_ns) != 0)
      first_entry_ns = std::min(first_entry_ns, word(b, StampPoint::entry_ns));
  std::vector<StampSpread> out;
  for (int k = static_cast<int>(StampPoint::ready); k < kStampPoints; ++k) {
    const auto p = static_cast<StampPoint>(k);
    const StampOrigin from = stamp_origin(p);
    std::vector<int64_t> after;
    for (std::size_t b = 0; b < blocks; ++b) {
      const uint64_t entry = word(b, StampPoint::entry);
      const uint64_t at = word(b, p);
      if (entry == 0 || at == 0) continue;  // a block that did not run, or did not reach the point
      const uint64_t origin = from == StampOrigin::first_block_entry_ns ? first_entry_ns
                              : from == StampOrigin::first_token_end  ? word(b, StampPoint::merged)
                                                                      : entry;
      if (origin == 0) continue;  // next_staged of a block whose first token never reached merged
      if (at < origin)
        throw std::invalid_argument("kernel stamps: block " + std::to_string(b) + "'s " +
                                    std::string(stamp_point_name(p)) + " precedes its origin (" +
                                    std::to_string(at) + " < " + std::to_string(origin) + ")");
      after.push_back(static_cast<int64_t>(at - origin));
    }
    StampSpread s;
    s.point = p;
    s.blocks = static_cast<int>(after.size());
    if (!after.empty()) {
      std::sort(after.begin(), after.end());
      s.p10 = at_rank(after, 0.1);
      s.median = at_rank(after, 0.5);
      s.p90 = at_rank(after, 0.9);
    }
    out.push_back(s);
  }
  return out;
}

#if defined(MLACHECK_HAVE_GPU_RUNTIME) && !defined(MLACHECK_HOPPER_STAMPS)
void reset_kernel_stamps(StreamHandle) {
  throw std::logic_error("kernel stamps: this binary was built without them (-DMLACHECK_HOPPER_STAMPS=ON)");
}
std::vector<uint64_t> read_kernel_stamps(StreamHandle) {
  throw std::logic_error("kernel stamps: this binary was built without them (-DMLACHECK_HOPPER_STAMPS=ON)");
}
#endif

}  // namespace mlacheck::gpu
