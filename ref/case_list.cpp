#include "ref/case_list.h"

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/core.h>

namespace mlacheck::ref {
namespace {

template <class Int>
bool parse_int(std::string_view s, Int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool parse_bool(std::string_view s, bool& out) {
  if (s == "0" || s == "1") {
    out = s == "1";
    return true;
  }
  return false;
}

CaseSpec parse_line(std::string_view line, std::string_view origin, int line_no) {
  const auto fail = [&](const std::string& msg) {
    return CaseListError(fmt::format("{}:{}: {}", origin, line_no, msg));
  };
  CaseSpec c;
  std::set<std::string> seen;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r')) ++pos;
    if (pos >= line.size()) break;
    std::size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') ++end;
    const std::string_view token = line.substr(pos, end - pos);
    pos = end;
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw fail(fmt::format("'{}' is not key=value", token));
    const std::string key(token.substr(0, eq));
    const std::string_view value = token.substr(eq + 1);
    if (!seen.insert(key).second) throw fail(fmt::format("key '{}' given twice", key));
    const auto bad = [&](const char* what) {
      return fail(fmt::format("{}={}: expected {}", key, value, what));
    };
    if (key == "name") {
      if (value.empty()) throw bad("a name");
      c.name = value;
    } else if (key == "batch") {
      if (!parse_int(value, c.batch) || c.batch < 0) throw bad("an integer >= 0");
    } else if (key == "kv_len") {
      if (!parse_int(value, c.kv_len) || c.kv_len < 0) throw bad("an integer >= 0");
    } else if (key == "q_len") {
      if (!parse_int(value, c.q_len) || c.q_len < 1 || c.q_len > 4) throw bad("1, 2, 3 or 4");
    } else if (key == "seed") {
      if (!parse_int(value, c.seed)) throw bad("an unsigned 64-bit integer");
    } else if (key == "profile") {
      const auto p = parse_profile(value);
      if (!p) throw bad("harness, peaked, outliers or boundary");
      c.profile = *p;
    } else if (key == "layout") {
      if (value != "uniform" && value != "ragged") throw bad("uniform or ragged");
      c.ragged = value == "ragged";
    } else if (key == "page_size") {
      if (!parse_int(value, c.page_size) || c.page_size < 1) throw bad("an integer >= 1");
    } else if (key == "shuffle_pages") {
      if (!parse_bool(value, c.shuffle_pages)) throw bad("0 or 1");
    } else if (key == "poison_unused") {
      if (!parse_bool(value, c.poison_unused)) throw bad("0 or 1");
    } else {
      throw fail(fmt::format("unknown key '{}'", key));
    }
  }
  for (const char* required : {"batch", "kv_len", "seed"})
    if (seen.count(required) == 0) throw fail(fmt::format("missing {}=", required));
  if (c.name.empty()) c.name = default_name(c);
  return c;
}

}  // namespace

std::vector<CaseSpec> parse_case_list(std::string_view text, std::string_view origin) {
  std::vector<CaseSpec> cases;
  int line_no = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(start, end - start);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos)
      cases.push_back(parse_line(line, origin, line_no));
    start = end + 1;
  }
  return cases;
}

std::vector<CaseSpec> read_case_list(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CaseListError(fmt::format("{}: cannot open the case list", path));
  std::ostringstream text;
  text << f.rdbuf();
  if (f.bad()) throw CaseListError(fmt::format("{}: read error", path));
  return parse_case_list(text.str(), path);
}

}  // namespace mlacheck::ref
