#pragma once
// Files for the fuzz targets. The readers under test take a path (they pread a file and check its
// size and type; none reads a buffer), so each input is written to a file first; the writers
// write a temporary beside their target and rename it, so they need a real directory.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace mlacheck::fuzz {

// One memfd per process, rewritten for every input and opened by path as /proc/self/fd/N: a
// regular file (the readers refuse anything else) that never touches the disk or outlives the run.
class InputFile {
 public:
  InputFile();
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  // Replaces the file's contents with `bytes` and returns its path.
  const std::string& write(std::span<const uint8_t> bytes);

 private:
  int fd_ = -1;
  std::string path_;
};

// A directory of this process, removed with everything in it when the process exits normally
// (a crashing run leaves it, a few KB). On /dev/shm where there is one: the writers fsync, and an
// fsync to disk per input would slow the fuzzer down many times over.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace mlacheck::fuzz
