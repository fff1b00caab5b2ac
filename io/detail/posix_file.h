#pragma once
// Thin RAII wrappers over POSIX file descriptors. pread has no shared file position, so one open
// file can serve concurrent reads from const methods; write_all/fsync report every failure.
// Errors name the file; callers add the tensor.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace mlacheck::io::detail {

class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::filesystem::path& path);  // throws Error
  ~ReadOnlyFile();
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  uint64_t size() const { return size_; }  // at open time
  // Fills `out` from byte `offset`; throws Error (with `what` in the message) on a short read.
  void read_exact(uint64_t offset, std::span<std::byte> out, const std::string& what) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A file created for writing (O_CREAT | O_TRUNC). close() must be called to learn whether the
// data reached the disk; the destructor only releases the descriptor.
class WriteOnlyFile {
 public:
  explicit WriteOnlyFile(const std::filesystem::path& path);  // throws Error
  WriteOnlyFile(const std::filesystem::path& path, int fd);   // adopts an open descriptor
  ~WriteOnlyFile();
  WriteOnlyFile(const WriteOnlyFile&) = delete;
  WriteOnlyFile& operator=(const WriteOnlyFile&) = delete;

  void write_all(std::span<const std::byte> data);  // throws Error
  void sync_and_close();                             // fsync + close; throws Error

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// "<path>: <what> failed: <strerror(errno)>"
std::string errno_message(const std::filesystem::path& path, const std::string& what, int err);

}  // namespace mlacheck::io::detail
