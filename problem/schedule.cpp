#include "problem/schedule.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include <fmt/core.h>

#include "io/error.h"
#include "io/printable.h"
#include "io/text_file.h"
#include "problem/error.h"

namespace mlacheck::problem {
namespace {

int64_t parse_count(std::string_view item, std::string_view value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    throw ProblemError(fmt::format("schedule item '{}': '{}' is not an integer in {} .. {}", item,
                                   value, lo, hi));
  return v;
}

std::vector<std::vector<int64_t>> read_table(const std::string& path) {
  std::string text;
  try {
    text = io::read_text_file(path, "schedule table", kMaxScheduleFileBytes);
  } catch (const io::Error& e) {
    throw ProblemError(e.what());
  }
  std::istringstream in(text);
  std::vector<std::vector<int64_t>> table;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<int64_t> starts;
    std::string w;
    while (words >> w) {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
      if (ec != std::errc() || end != w.data() + w.size() || v < 0)
        throw ProblemError(fmt::format("schedule table {}:{}: '{}' is not a key offset >= 0",
                                       path, line_no, io::printable(w)));
      if (!starts.empty() && v <= starts.back())
        throw ProblemError(fmt::format(
            "schedule table {}:{}: split starts must increase ({} after {})", path, line_no, v,
            starts.back()));
      if (starts.empty() && v != 0)
        throw ProblemError(
            fmt::format("schedule table {}:{}: the first split starts at key 0, not {}", path,
                        line_no, v));
      starts.push_back(v);
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank / comment
    table.push_back(std::move(starts));
  }
  if (table.empty())
    throw ProblemError(fmt::format("schedule table {}: no request lines", path));
  return table;
}

}  // namespace

Schedule Schedule::from_plan(const SplitPlan& plan, int tile) {
  if (plan.is_balanced())
    return balanced(plan.balanced_blocks, plan.unit_keys, plan.overhead_units, tile);
  if (plan.chunk_keys > 0) return {Kind::chunk, plan.chunk_keys, {}, {}, tile};
  if (plan.num_splits > 0) return uniform(plan.num_splits, tile);
  return single(tile);
}

std::vector<KeyRange> Schedule::ranges(int64_t b, int64_t len) const {
  std::vector<KeyRange> out;
  switch (kind) {
    case Kind::single:
      out.push_back({0, len});
      break;
    case Kind::splits: {
      const int64_t per = (len + count - 1) / count;
      for (int64_t s = 0; s < count; ++s) {
        const int64_t a = std::min(s * per, len);
        out.push_back({a, std::min(a + per, len)});
      }
      break;
    }
    case Kind::split_len:
      for (int64_t a = 0; a < len; a += count) out.push_back({a, std::min(a + count, len)});
      if (out.empty()) out.push_back({0, 0});
      break;
    case Kind::chunk: {
      const SplitPlan plan = SplitPlan::chunked(static_cast<int>(count));
      const int64_t s_count = plan.splits_of(len);
      const int64_t per = (len + s_count - 1) / s_count;
      for (int64_t s = 0; s < s_count; ++s) {
        const int64_t a = std::min(s * per, len);
        out.push_back({a, std::min(a + per, len)});
      }
      break;
    }
    case Kind::table: {
      if (b < 0 || b >= static_cast<int64_t>(table.size()))
        throw ProblemError(fmt::format("schedule table {}: no line for request {} ({} lines)",
                                       table_source, b, table.size()));
      const std::vector<int64_t>& starts = table[static_cast<std::size_t>(b)];
      if (starts.empty()) {
        out.push_back({0, len});
        break;
      }
      for (std::size_t i = 0; i < starts.size(); ++i) {
        const int64_t end = i + 1 < starts.size() ? starts[i + 1] : len;
        if (starts[i] >= len && !(len == 0 && starts.size() == 1))
          throw ProblemError(fmt::format(
              "schedule table {}: request {} has {} keys, but a split starts at key {}",
              table_source, b, len, starts[i]));
        out.push_back({starts[i], end});
      }
      break;
    }
    case Kind::balanced:
      throw ProblemError(fmt::format("schedule {}: a balanced schedule's ranges depend on the "
                                     "whole batch (problem::BatchSplits)",
                                     to_string(*this)));
  }
  return out;
}

int64_t Schedule::max_ranges(int64_t num_requests, int64_t max_len) const {
  switch (kind) {
    case Kind::single: return 1;
    case Kind::splits: return count;
    case Kind::split_len: return std::max<int64_t>(1, (max_len + count - 1) / count);
    case Kind::chunk: return SplitPlan::chunked(static_cast<int>(count)).max_splits(max_len);
    case Kind::table: {
      int64_t most = 1;
      for (int64_t b = 0; b < std::min<int64_t>(num_requests, static_cast<int64_t>(table.size()));
           ++b)
        most = std::max<int64_t>(most, static_cast<int64_t>(table[static_cast<std::size_t>(b)].size()));
      return most;
    }
    case Kind::balanced:
      return SplitPlan::balanced_over(balanced_blocks, std::max(unit_keys, 1), overhead_units).max_splits(max_len);
  }
  return 1;
}

void Schedule::check_fits(std::span<const int32_t> kv_indptr) const {
  if (kind != Kind::table) return;
  const int64_t requests = static_cast<int64_t>(kv_indptr.size()) - 1;
  if (static_cast<int64_t>(table.size()) != requests)
    throw ProblemError(fmt::format("schedule table {}: {} request lines, the batch has {} requests",
                                   table_source, table.size(), requests));
  for (int64_t b = 0; b < requests; ++b) (void)ranges(b, kv_indptr[b + 1] - kv_indptr[b]);
}

BatchSplits::BatchSplits(const Schedule& schedule, std::span<const int32_t> kv_indptr)
    : schedule_(&schedule) {
  const std::size_t requests = kv_indptr.empty() ? 0 : kv_indptr.size() - 1;
  len_.resize(requests);
  int64_t max_len = 0;
  for (std::size_t b = 0; b < requests; ++b) {
    len_[b] = int64_t{kv_indptr[b + 1]} - kv_indptr[b];
    max_len = std::max(max_len, len_[b]);
  }
  if (schedule.kind != Schedule::Kind::balanced) {
    max_ranges_ = std::max<int64_t>(1, schedule.max_ranges(num_requests(), max_len));
    return;
  }
  const int64_t blocks = schedule.balanced_blocks, unit = schedule.unit_keys,
                overhead = schedule.overhead_units;
  if (blocks < 1 || blocks > kMaxPlanSplits || unit < 1 || overhead < 0)
    throw ProblemError(fmt::format(
        "schedule {}: a balanced schedule needs 1 .. {} blocks, unit >= 1 and overhead >= 0",
        to_string(schedule), kMaxPlanSplits));
  // The cost axis (split_plan.h): request b's units start at A_b = (b + 1) O + sum_{b' < b} T_b'.
  unit_start_.resize(requests);
  int64_t cost = 0;
  for (std::size_t b = 0; b < requests; ++b) {
    cost += overhead;
    unit_start_[b] = cost;
    cost += balanced::units_of(len_[b], unit);
  }
  share_ = balanced::share(cost, blocks, overhead);
  const auto B = static_cast<int64_t>(requests);
  if (B < blocks) {  // the one-piece cut's P, by bisection as the plan kernel finds it
    const int64_t units = cost - B * overhead;
    int64_t low = balanced::one_piece::least_size_low(units, blocks);
    int64_t high = balanced::one_piece::least_size_high(units, blocks, B);
    while (low < high) {
      const int64_t mid = low + (high - low) / 2;
      int64_t pieces = 0;
      for (std::size_t b = 0; b < requests; ++b)
        pieces += balanced::one_piece::pieces(balanced::units_of(len_[b], unit), mid);
      if (pieces <= blocks) high = mid;
      else low = mid + 1;
    }
    if (balanced::one_piece::taken(B, blocks, low, share_)) one_piece_size_ = low;
  }
  max_ranges_ = 1;
  for (std::size_t b = 0; b < requests; ++b) {
    const int64_t t = balanced::units_of(len_[b], unit);
    max_ranges_ = std::max(max_ranges_, one_piece_size_ > 0 ? balanced::one_piece::pieces(t, one_piece_size_)
                                                            : balanced::pieces(unit_start_[b], t, share_));
  }
}

std::vector<KeyRange> BatchSplits::ranges(int64_t b) const {
  if (b < 0 || b >= num_requests())
    throw ProblemError(
        fmt::format("request {} is not in the batch ({} requests)", b, num_requests()));
  const int64_t len = len_[static_cast<std::size_t>(b)];
  if (schedule_->kind != Schedule::Kind::balanced) return schedule_->ranges(b, len);
  const int64_t unit = schedule_->unit_keys, a = unit_start_[static_cast<std::size_t>(b)];
  const int64_t units = balanced::units_of(len, unit);
  const bool one_piece = one_piece_size_ > 0;
  const int64_t n =
      one_piece ? balanced::one_piece::pieces(units, one_piece_size_) : balanced::pieces(a, units, share_);
  std::vector<KeyRange> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int64_t s = 0; s < n; ++s) {
    const balanced::PieceKeys k =
        one_piece ? balanced::one_piece::piece_keys(balanced::one_piece::piece_units(units, n), s, n, unit, len)
                  : balanced::piece_keys(a, s, n, share_, unit, len);
    out.push_back({k.first, k.end});
  }
  return out;
}

Schedule parse_schedule(std::string_view spelling) {
  Schedule s;
  bool kind_given = false;
  if (spelling.empty()) throw ProblemError("empty schedule (e.g. single, splits=16,tile=64)");
  std::string_view rest = spelling;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    const auto set_kind = [&](Schedule::Kind k) {
      if (kind_given)
        throw ProblemError(fmt::format("schedule '{}': more than one split kind", spelling));
      kind_given = true;
      s.kind = k;
    };
    if (key == "single" && eq == std::string_view::npos) {
      set_kind(Schedule::Kind::single);
    } else if (key == "splits") {
      set_kind(Schedule::Kind::splits);
      s.count = parse_count(item, value, 1, kMaxPlanSplits);
    } else if (key == "split-len") {
      set_kind(Schedule::Kind::split_len);
      s.count = parse_count(item, value, 1, int64_t{1} << 31);
    } else if (key == "chunk") {
      set_kind(Schedule::Kind::chunk);
      s.count = parse_count(item, value, 1, int64_t{1} << 30);
    } else if (key == "balanced") {
      set_kind(Schedule::Kind::balanced);
      const std::size_t slash1 = value.find('/');
      const std::size_t slash2 =
          slash1 == std::string_view::npos ? slash1 : value.find('/', slash1 + 1);
      if (slash2 == std::string_view::npos || value.find('/', slash2 + 1) != std::string_view::npos)
        throw ProblemError(fmt::format("schedule item '{}': expected balanced=BLOCKS/UNIT/OVERHEAD "
                                       "(e.g. balanced=132/64/2)",
                                       item));
      s.balanced_blocks =
          static_cast<int>(parse_count(item, value.substr(0, slash1), 1, kMaxPlanSplits));
      s.unit_keys = static_cast<int>(
          parse_count(item, value.substr(slash1 + 1, slash2 - slash1 - 1), 1, int64_t{1} << 30));
      s.overhead_units =
          static_cast<int>(parse_count(item, value.substr(slash2 + 1), 0, int64_t{1} << 30));
    } else if (key == "table") {
      set_kind(Schedule::Kind::table);
      if (value.empty()) throw ProblemError("schedule item 'table=' needs a file");
      s.table_source = std::string(value);
      s.table = read_table(s.table_source);
    } else if (key == "tile") {
      s.softmax_tile = static_cast<int>(parse_count(item, value, 1, int64_t{1} << 30));
    } else {
      throw ProblemError(fmt::format(
          "schedule '{}': unknown item '{}' (single, splits=N, split-len=K, chunk=K, "
          "balanced=B/U/O, table=FILE, tile=T)",
          spelling, item));
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return s;
}

std::string to_string(const Schedule& s) {
  std::string out;
  switch (s.kind) {
    case Schedule::Kind::single: out = "single"; break;
    case Schedule::Kind::splits: out = fmt::format("splits={}", s.count); break;
    case Schedule::Kind::split_len: out = fmt::format("split-len={}", s.count); break;
    case Schedule::Kind::chunk: out = fmt::format("chunk={}", s.count); break;
    case Schedule::Kind::table: out = "table=" + s.table_source; break;
    case Schedule::Kind::balanced:
      out = fmt::format("balanced={}/{}/{}", s.balanced_blocks, s.unit_keys, s.overhead_units);
      break;
  }
  if (s.softmax_tile > 0) out += fmt::format(",tile={}", s.softmax_tile);
  return out;
}

}  // namespace mlacheck::problem
