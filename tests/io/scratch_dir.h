#pragma once
// A fresh directory per test under the system temp dir, removed (with everything in it) when the
// test ends, so tests can write real files without colliding when run in parallel.
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace mlacheck::io::testing {

class ScratchDir {
 public:
  ScratchDir();  // named after the running test and the process id
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes `bytes` to `path` exactly (binary), replacing any file there.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// The whole file as bytes.
std::string read_file(const std::filesystem::path& path);

// Every entry directly in `dir`, sorted ("a.safetensors", ...) — to assert what a write left behind.
std::string list_dir(const std::filesystem::path& dir);

}  // namespace mlacheck::io::testing
