#include "cli/distinct_paths.h"

#include <filesystem>
#include <stdexcept>

#include <fmt/core.h>

namespace mlacheck::cli {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

}  // namespace

void require_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty()) continue;
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        throw std::invalid_argument(fmt::format(
            "{} '{}' is the {} input file: writing it would destroy the input; choose another path",
            out.role, out.path, in.role));
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        throw std::invalid_argument(fmt::format("{} and {} name the same file '{}'", out.role,
                                                outputs[j].role, out.path));
  }
}

}  // namespace mlacheck::cli
