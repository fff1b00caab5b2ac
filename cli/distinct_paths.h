#pragma once
// An output path that names one of the command's inputs (or another output) is refused before
// anything runs: `compare G O --json G` used to replace the golden file with its own report.
#include <string>
#include <vector>

namespace mlacheck::cli {

struct NamedPath {
  std::string role;  // as the user wrote it: "GOLDEN", "--json", ...
  std::string path;  // empty = not given
};

// Throws std::invalid_argument naming both roles when an output is the same file as an input or
// as another output (same inode when both exist, else the same canonical path).
void require_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace mlacheck::cli
