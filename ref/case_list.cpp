#include "ref/case_list.h"

#include <charconv>
#include <map>
#include <set>

#include <fmt/core.h>

#include "io/error.h"
#include "io/printable.h"
#include "io/text_file.h"

namespace mlacheck::ref {
namespace {

// Text from the file, quoted safely in a message (control bytes escaped, long tokens elided).
std::string shown(std::string_view text) { return io::printable(text); }

// A case name becomes a file name under gen's -o directory, so it must be one path component of
// the portable file-name set (POSIX 3.282 plus '+'): no '/', no "." or "..", no leading '.' (no
// hidden files) or '-' (no option look-alikes), and short enough for any file system.
constexpr std::size_t kMaxCaseNameChars = 128;

bool valid_case_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxCaseNameChars || name[0] == '.' || name[0] == '-')
    return false;
  for (const char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '_' || ch == '-' || ch == '+';
    if (!ok) return false;
  }
  return true;
}

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
      throw fail(fmt::format("'{}' is not key=value", shown(token)));
    const std::string key(token.substr(0, eq));
    const std::string_view value = token.substr(eq + 1);
    if (!seen.insert(key).second) throw fail(fmt::format("key '{}' given twice", shown(key)));
    const auto bad = [&](std::string_view what) {
      return fail(fmt::format("{}={}: expected {}", key, shown(value), what));
    };
    if (key == "name") {
      if (!valid_case_name(value))
        throw bad(fmt::format("a file-name component of at most {} characters from A-Z a-z 0-9 . _ - +, "
                              "not starting with '.' or '-'", kMaxCaseNameChars));
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
      throw fail(fmt::format("unknown key '{}'", shown(key)));
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
  std::map<std::string, int> line_of_name;  // names are file names: two cases must not share one
  int line_no = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(start, end - start);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      cases.push_back(parse_line(line, origin, line_no));
      const auto [at, fresh] = line_of_name.emplace(cases.back().name, line_no);
      if (!fresh)
        throw CaseListError(fmt::format("{}:{}: case name '{}' is already used on line {}", origin,
                                        line_no, cases.back().name, at->second));
    }
    start = end + 1;
  }
  return cases;
}

std::vector<CaseSpec> read_case_list(const std::string& path) {
  std::string text;
  try {
    text = io::read_text_file(path, "case list");
  } catch (const io::Error& e) {
    throw CaseListError(e.what());
  }
  std::vector<CaseSpec> cases = parse_case_list(text, path);
  // A list that names no case is a mistake (a wrong file, everything commented out), not a pass.
  if (cases.empty()) throw CaseListError(fmt::format("{}: the case list has no case", path));
  return cases;
}

}  // namespace mlacheck::ref
