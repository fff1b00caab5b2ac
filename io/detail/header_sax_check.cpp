#include "io/detail/header_sax_check.h"

#include <nlohmann/json.hpp>

#include <set>
#include <vector>

namespace mlacheck::io::detail {
namespace {

using json = nlohmann::json;

// Deepest valid nesting: {"name": {"shape": [ ... ]}}.
constexpr std::size_t kMaxDepth = 3;

class DuplicateAndDepthCheck {
 public:
  std::string problem;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }

  bool start_object(std::size_t) { return push(); }
  bool start_array(std::size_t) { return push(); }
  bool end_object() { return pop(); }
  bool end_array() { return pop(); }

  bool key(json::string_t& k) {
    Frame& frame = stack_.back();
    if (stack_.size() == 1) top_key_ = k;
    if (!frame.keys.insert(k).second) {
      if (stack_.size() == 1)
        problem = "key '" + k + "' appears twice in the header";
      else if (top_key_ == "__metadata__")
        problem = "__metadata__: key '" + k + "' appears twice";
      else
        problem = "tensor '" + top_key_ + "': key '" + k + "' appears twice";
      return false;
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    problem = std::string("header is not valid JSON: ") + ex.what();
    return false;
  }

 private:
  struct Frame {
    std::set<std::string> keys;  // unused for arrays
  };
  std::vector<Frame> stack_;
  std::string top_key_;

  bool push() {
    if (stack_.size() >= kMaxDepth) {
      problem = "header nests deeper than a safetensors header can (under key '" + top_key_ + "')";
      return false;
    }
    stack_.emplace_back();
    return true;
  }
  bool pop() {
    stack_.pop_back();
    return true;
  }
};

}  // namespace

std::string check_header_json(std::string_view json_text) {
  DuplicateAndDepthCheck check;
  const bool ok = json::sax_parse(json_text, &check);
  if (!ok && check.problem.empty()) check.problem = "header is not valid JSON";
  return check.problem;
}

}  // namespace mlacheck::io::detail
