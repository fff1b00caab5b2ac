#pragma once
// Memory is estimated before anything large is allocated (issue 11 item 6): a case that cannot fit
// is an error with the numbers ("needs 31.2 GB, 22.9 GB available", exit 2), not a SIGKILL from the
// kernel's OOM killer or a bare std::bad_alloc halfway through.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mlacheck::cli {

// What a golden case occupies in memory (cli/golden_case.h): q and kv in bf16, the FP8 and MXFP4
// caches held whole (`held`; derived ones are not, see HeldCaches), the exact output and lse in
// float32, each recipe's bf16 output and lse, the batch's indptr, plus kWorkingBytes of
// per-thread buffers and chunks: an upper bound of `ref` and `gen`'s peak (docs/PERF.md,
// "Derived caches never whole": 64x8192 on 2 cores, estimate 0.9 GB, peak RSS 0.64 GB; compare
// a16w8: 1.2 GB estimated, 0.92 GB peak).
struct CaseSize {
  int64_t total_q = 0;     // queries T
  int64_t cache_rows = 0;  // rows N of the bf16 cache
  int64_t requests = 0;
  int64_t page_entries = 0;  // kv_indices entries
};
// The quantized caches a command holds whole: ref those its input file has, gen none (the derived
// caches are quantized on read and written in chunks); verify and bench hold what they make.
struct HeldCaches {
  bool fp8 = true, mxfp4 = true;
};
inline constexpr HeldCaches kOnlyDerivedCaches{.fp8 = false, .mxfp4 = false};  // gen
uint64_t golden_case_bytes(const CaseSize& size, std::size_t recipes, HeldCaches held = {});
// What compare / drift / identify hold: q, kv and the caches the recipe reads, and up to
// kJudgingOutputs float32 [T, 16, 512] arrays (the exact reference, the kernel's output, the
// emulation, its sensitivity terms and per-element bounds).
inline constexpr uint64_t kJudgingOutputs = 10;
uint64_t judging_bytes(const CaseSize& size, bool fp8_cache, bool mxfp4_cache);

// Headroom for the decoders' per-thread buffers, the writer's header and chunks (a derived cache is
// written kChunkBytes at a time, io/safetensors.h) and the allocator's slack.
inline constexpr uint64_t kWorkingBytes = 256ull << 20;

// Bytes this process may still allocate: the smaller of /proc/meminfo's MemAvailable and the
// cgroup's limit minus its usage (v2 memory.max / memory.current, or v1's files). The environment
// variable MLACHECK_MEMORY_AVAILABLE (bytes) replaces the measurement: tests use it, and a user
// can set a lower ceiling on a shared machine.
uint64_t available_memory_bytes();

// Throws std::runtime_error "WHAT needs X GB, Y GB available (...)" when need > available.
void require_memory(uint64_t need, std::string_view what);

}  // namespace mlacheck::cli
