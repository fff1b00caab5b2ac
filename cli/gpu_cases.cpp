#include "cli/gpu_cases.h"

#include <algorithm>
#include <stdexcept>

#include "cli/golden_case.h"
#include "cli/progress_printer.h"
#include "ref/case_list.h"

namespace mlacheck::cli {

std::vector<ref::CaseSpec> select_cases(const std::string& list_path,
                                        const std::vector<std::string>& names) {
  std::vector<ref::CaseSpec> cases = ref::read_case_list(list_path);
  for (ref::CaseSpec& c : cases)
    if (c.name.empty()) c.name = ref::default_name(c);
  if (!names.empty()) {
    for (const std::string& n : names)
      if (std::none_of(cases.begin(), cases.end(), [&](const ref::CaseSpec& c) { return c.name == n; }))
        throw std::invalid_argument("no case named '" + n + "' in " + list_path);
    std::erase_if(cases, [&](const ref::CaseSpec& c) {
      return std::find(names.begin(), names.end(), c.name) == names.end();
    });
  }
  if (cases.empty()) throw std::invalid_argument("no case selected from " + list_path);
  return cases;
}

namespace {
ref::CaseSpec unpoisoned(ref::CaseSpec s) {
  s.poison_unused = false;
  return s;
}
}  // namespace

PreparedCase::PreparedCase(const ref::CaseSpec& spec) : spec_(spec), inputs_([&] {
  require_memory(golden_case_bytes(case_size(spec), 1), "case " + spec.name);
  ProgressPrinter progress("generate " + spec.name);
  return ref::generate(unpoisoned(spec), &progress);
}()) {
  caches_ = std::make_unique<ref::KvCaches>(inputs_.kv, inputs_.batch.cache_rows());
}

}  // namespace mlacheck::cli
