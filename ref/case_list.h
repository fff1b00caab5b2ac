#pragma once
// Case lists: the cases `mlacheck gen --case-list FILE` makes, one per line (data/cases/*.txt).
//
// Format: text, one case per line; '#' starts a comment (to the end of the line); blank lines
// are skipped. A case is a list of key=value tokens separated by spaces or tabs, in any order:
//   batch=B kv_len=L seed=S          required (B >= 0, L >= 0, S a 64-bit unsigned integer)
//   q_len=1..4                       default 1
//   profile=harness|peaked|outliers|boundary   default harness
//   layout=uniform|ragged            default uniform
//   page_size=N                      default 1
//   shuffle_pages=0|1                default 0
//   poison_unused=0|1                default 0
//   name=ID                          default: ref::default_name()
// Meaning of each field: ref/case_spec.h. A key may appear once per line.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ref/case_spec.h"

namespace mlacheck::ref {

// A malformed case list; the message starts with "origin:line: ".
class CaseListError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `origin` names the text in messages (a file name).
std::vector<CaseSpec> parse_case_list(std::string_view text, std::string_view origin);
// Reads and parses a file; an unreadable file is a CaseListError too.
std::vector<CaseSpec> read_case_list(const std::string& path);

}  // namespace mlacheck::ref
