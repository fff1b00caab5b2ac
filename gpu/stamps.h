#pragma once
// Where a hopper attention block's time goes: an opt-in build (-DMLACHECK_HOPPER_STAMPS=ON, CUDA for
// sm_90a) whose hopper kernel has its consumer thread 0 read the SM's cycle counter at fixed points
// of each block's first token, and `mlacheck bench --stamps` prints them per strategy and case
// (cycles since the block's entry: median and spread over the blocks). Several sessions of issue 10
// built such stamps on throw-away branches (the 4 x 1024 timeline in docs/HOPPER.md, the decoded
// kernels' Q staging and epilogue); kept here so that the next question about a block's fixed
// costs is one build flag away. In every other build the kernel is compiled without them (the stamp
// calls are empty inline functions) and --stamps is refused.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gpu/params.h"

namespace mlacheck::gpu {

// The points, in the order a block passes them. The cycle points are clock64 readings of the
// block's SM; entry_ns and exit_ns are the global timer (ns, one clock for all SMs: the spread of
// the blocks' starts and ends).
enum class StampPoint : int {
  entry,        // the kernel's first instruction (thread 0)
  ready,        // its mbarriers initialised (the block's, or the cluster's, one barrier)
  started,      // the predecessor kernel's writes visible (Q quantization, work list)
  q_staged,     // Q of the first token in shared memory (the consumers' barrier after it)
  first_box,    // then warp 0 waits for the first tile's first box (bf16) or part (decoded kernels): at
                // once when they landed before Q; at once too for a token without tiles
  tiles_done,   // the first token's tiles: every product waited for (thread 0's warpgroup)
  halves_met,   // decoded kernels only: both warpgroups' halves of Oᵀ handed over (the consumers'
                // barrier of the exchange, whose wait is the other warpgroup's last tile)
  exchanged,    // decoded kernels: the two warpgroups' partials added, l reduced (else = tiles_done)
  quotients,    // fl32(acc / l) of every element (the output's values, before any store)
  out_issued,   // the output's or partial's global stores issued by thread 0 (before the barrier)
  stored,       // the token's output or partial and its LSE written (the consumers' barrier after)
  merged,       // split-K in a cluster: the token's merge done (else = stored)
  next_staged,  // Q of the block's second token in shared memory (a persistent block's next piece, or
                // the next query token of a request); summarized from the block's `merged`, not its
                // entry: what a token's end costs the one after it
  exit,         // thread 0 leaves the kernel (every token of the block done)
  entry_ns,     // the global timer at entry
  exit_ns,      // the global timer at exit
  count
};
inline constexpr int kStampPoints = static_cast<int>(StampPoint::count);
// Blocks that record (blockIdx.x below this); the rest run unstamped. 1024 x 16 x 8 bytes = 128 KB of
// device memory, more than the grids of the harness shapes (at most 2 blocks an SM of 132).
inline constexpr int kStampBlocks = 1024;

inline constexpr std::array<std::string_view, kStampPoints> kStampPointNames{
    "entry",     "ready",      "started", "q_staged", "first_box",   "tiles_done", "halves_met", "exchanged",
    "quotients", "out_issued", "stored",  "merged",   "next_staged", "exit",       "entry_ns",   "exit_ns"};
static_assert(!kStampPointNames.back().empty(), "a name for every StampPoint");

constexpr std::string_view stamp_point_name(StampPoint p) { return kStampPointNames[static_cast<std::size_t>(p)]; }

// What each point's summary counts from (summarize_stamps, and the CLI's text and JSON say it): the
// global-timer points from the earliest entry_ns of all blocks, next_staged from the same block's
// merged (its first token's end), every other point from the block's own entry.
enum class StampOrigin { block_entry, first_token_end, first_block_entry_ns };
constexpr StampOrigin stamp_origin(StampPoint p) {
  if (p == StampPoint::entry_ns || p == StampPoint::exit_ns) return StampOrigin::first_block_entry_ns;
  return p == StampPoint::next_staged ? StampOrigin::first_token_end : StampOrigin::block_entry;
}

// True in a stamps build (MLACHECK_HOPPER_STAMPS).
bool kernel_stamps_built();

// One point over the blocks that reached it (a stamp of 0 = not reached).
struct StampSpread {
  StampPoint point = StampPoint::entry;
  int blocks = 0;           // blocks with this stamp
  int64_t p10 = 0, median = 0, p90 = 0;  // cycle points: cycles after the block's entry; ns points: ns after the
                                         // earliest entry_ns of all blocks
};

// The spread of each point (entry itself left out: 0 by definition) over the blocks of `raw`
// (kStampPoints words a block, as read_kernel_stamps returns them); blocks that never stamped
// entry (not launched, or past kStampBlocks) are left out. Nearest-rank percentiles, as `bench`'s
// times. Throws std::invalid_argument when raw.size() is not a multiple of kStampPoints, or when a
// block's cycle stamp precedes its own entry (a counter that is not the SM's own, or a stamp written
// by another kernel).
std::vector<StampSpread> summarize_stamps(const std::vector<uint64_t>& raw);

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
// Stamps builds only (else std::logic_error): zero every block's stamps (queued on `stream`), and
// copy them back after the work on `stream` is done (kStampBlocks x kStampPoints words).
void reset_kernel_stamps(StreamHandle stream);
std::vector<uint64_t> read_kernel_stamps(StreamHandle stream);
#endif

}  // namespace mlacheck::gpu
