#include "cli/stamps_text.h"

#include <algorithm>

#include <fmt/core.h>

namespace mlacheck::cli {
namespace {

bool ns_point(gpu::StampPoint p) { return gpu::stamp_origin(p) == gpu::StampOrigin::first_block_entry_ns; }
bool after_merged(gpu::StampPoint p) { return gpu::stamp_origin(p) == gpu::StampOrigin::first_token_end; }

}  // namespace

std::string stamps_text(const std::vector<gpu::StampSpread>& spreads) {
  int blocks = 0;
  for (const gpu::StampSpread& s : spreads) blocks = std::max(blocks, s.blocks);
  if (blocks == 0) return "    stamps: none (only the hopper kernel stamps, in a -DMLACHECK_HOPPER_STAMPS=ON build)\n";
  std::string cycles, ns;
  for (const gpu::StampSpread& s : spreads) {
    if (s.blocks == 0) continue;
    std::string& line = ns_point(s.point) ? ns : cycles;
    line += fmt::format("{}{}{} {} [{}, {}]{}", line.empty() ? "" : " · ", gpu::stamp_point_name(s.point),
                        after_merged(s.point) ? " (after merged)" : "", s.median, s.p10, s.p90,
                        s.blocks < blocks ? fmt::format(" ({} blocks)", s.blocks) : "");
  }
  return fmt::format("    stamps of {} blocks, cycles after the block's entry, median [p10, p90]: {}\n"
                     "    ns after the first block's entry: {}\n",
                     blocks, cycles, ns);
}

nlohmann::json stamps_json(const std::vector<gpu::StampSpread>& spreads) {
  nlohmann::json j = nlohmann::json::object();
  for (const gpu::StampSpread& s : spreads)
    j[std::string(gpu::stamp_point_name(s.point))] = {{"blocks", s.blocks}, {"p10", s.p10},
                                                      {"median", s.median}, {"p90", s.p90},
                                                      {"unit", ns_point(s.point) ? "ns" : "cycles"},
                                                      {"from", ns_point(s.point)       ? "first block's entry"
                                                               : after_merged(s.point) ? "merged"
                                                                                       : "block's entry"}};
  return j;
}

}  // namespace mlacheck::cli
