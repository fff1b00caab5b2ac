// Fuzz target: the case-list parser (ref/case_list.h).
// Oracle: any text either parses or throws ref::CaseListError whose message starts with the
// origin (the documented "origin:line: "). Every case that parsed, printed back as the line that
// regenerates it (cli::case_line, what gen writes into golden files and manifests), parses to the
// same case. Any other outcome is a finding.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/golden_case.h"
#include "fuzz/finding.h"
#include "ref/case_list.h"

namespace {

namespace ref = mlacheck::ref;
using mlacheck::fuzz::finding;

bool same(const ref::CaseSpec& a, const ref::CaseSpec& b) {
  return a.name == b.name && a.batch == b.batch && a.kv_len == b.kv_len && a.q_len == b.q_len &&
         a.seed == b.seed && a.profile == b.profile && a.ragged == b.ragged &&
         a.page_size == b.page_size && a.shuffle_pages == b.shuffle_pages &&
         a.poison_unused == b.poison_unused;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<ref::CaseSpec> cases;
  try {
    cases = ref::parse_case_list(text, "fuzz.txt");
  } catch (const ref::CaseListError& e) {
    if (!std::string_view(e.what()).starts_with("fuzz.txt:"))
      finding("a CaseListError does not name its origin");
    return 0;
  }
  for (const ref::CaseSpec& c : cases) {
    const std::string line = mlacheck::cli::case_line(c);
    std::vector<ref::CaseSpec> again;
    try {
      again = ref::parse_case_list(line, "round trip");
    } catch (const ref::CaseListError& e) {
      finding(std::string("case_line() printed a line the parser refuses: ") + e.what());
    }
    if (again.size() != 1 || !same(again[0], c))
      finding("case_line() does not parse back to the same case: " + line);
  }
  return 0;
}
