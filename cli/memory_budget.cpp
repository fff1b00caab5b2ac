#include "cli/memory_budget.h"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "problem/kv_cache.h"
#include "problem/shape.h"

namespace mlacheck::cli {
namespace {

constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

// a * b, saturating: a case of 2^31 requests must give "needs 40000 GB", not a wrapped small number.
uint64_t mul(uint64_t a, uint64_t b) { return b != 0 && a > kUnlimited / b ? kUnlimited : a * b; }
uint64_t add(uint64_t a, uint64_t b) { return a > kUnlimited - b ? kUnlimited : a + b; }

std::optional<uint64_t> parse_bytes(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<uint64_t> read_number_file(const char* path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return parse_bytes(line);  // "max" (no limit) gives nullopt
}

uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return mul(kib, 1024);
  return kUnlimited;  // not Linux or no such line: no basis for a refusal
}

uint64_t cgroup_headroom() {
  for (const auto& [limit, usage] : {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
                                     std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                               "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto l = read_number_file(limit);
    if (!l) continue;
    const uint64_t u = read_number_file(usage).value_or(0);
    return *l > u ? *l - u : 0;
  }
  return kUnlimited;
}

// Bytes per query and per cache row of each piece a command holds (bf16 = 2, float32 = 4 bytes).
constexpr uint64_t kQBytes = problem::kNumHeads * problem::kQkDim * 2;
constexpr uint64_t kOutF32Bytes = problem::kNumHeads * problem::kVDim * 4;
constexpr uint64_t kOutBf16Bytes = kOutF32Bytes / 2;
constexpr uint64_t kLseBytes = problem::kNumHeads * 4;
constexpr uint64_t kKvBf16Bytes = problem::kQkDim * 2;
constexpr uint64_t kKvFp8Bytes = problem::kQkDim;
constexpr uint64_t kKvMxfp4Bytes = problem::kMxfp4RowBytes + problem::kMxfp4RowScales;

// kWorkingBytes + T * per_query + N * per_row + the batch's indptr (qo, kv int32 and the int64
// page indptr) and page table.
uint64_t case_bytes(const CaseSize& s, uint64_t per_query, uint64_t per_row) {
  uint64_t bytes = kWorkingBytes;
  bytes = add(bytes, mul(static_cast<uint64_t>(s.total_q), per_query));
  bytes = add(bytes, mul(static_cast<uint64_t>(s.cache_rows), per_row));
  bytes = add(bytes, mul(static_cast<uint64_t>(s.requests) + 1, 2 * 4 + 8));
  bytes = add(bytes, mul(static_cast<uint64_t>(s.page_entries), 4));
  return bytes;
}

}  // namespace

uint64_t golden_case_bytes(const CaseSize& s, std::size_t recipes, HeldCaches held) {
  // q, the exact output, each recipe's output; the bf16 cache and the quantized ones held whole.
  const uint64_t per_query = add(kQBytes + kOutF32Bytes + kLseBytes, mul(kOutBf16Bytes + kLseBytes, recipes));
  return case_bytes(s, per_query, kKvBf16Bytes + (held.fp8 ? kKvFp8Bytes : 0) + (held.mxfp4 ? kKvMxfp4Bytes : 0));
}

uint64_t judging_bytes(const CaseSize& s, bool fp8_cache, bool mxfp4_cache) {
  const uint64_t per_row = kKvBf16Bytes + (fp8_cache ? kKvFp8Bytes : 0) + (mxfp4_cache ? kKvMxfp4Bytes : 0);
  return case_bytes(s, kQBytes + kJudgingOutputs * (kOutF32Bytes + kLseBytes), per_row);
}

uint64_t available_memory_bytes() {
  if (const char* env = std::getenv("MLACHECK_MEMORY_AVAILABLE")) {
    const auto v = parse_bytes(env);
    if (!v) throw std::invalid_argument(fmt::format("MLACHECK_MEMORY_AVAILABLE='{}' is not a byte count", env));
    return *v;
  }
  const uint64_t a = mem_available(), c = cgroup_headroom();
  return a < c ? a : c;
}

void require_memory(uint64_t need, std::string_view what) {
  const uint64_t have = available_memory_bytes();
  if (need <= have) return;
  const bool from_env = std::getenv("MLACHECK_MEMORY_AVAILABLE") != nullptr;
  throw std::runtime_error(fmt::format(
      "{} needs {:.1f} GB of memory, {:.1f} GB available ({}); use a machine with more memory or a "
      "smaller case",
      what, static_cast<double>(need) / 1e9, static_cast<double>(have) / 1e9,
      from_env ? "MLACHECK_MEMORY_AVAILABLE" : "MemAvailable and the cgroup limit"));
}

}  // namespace mlacheck::cli
