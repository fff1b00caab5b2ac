#pragma once
// Thin RAII wrappers over POSIX file descriptors. pread has no shared file position, so one open
// file can serve concurrent reads from const methods; write_all/fsync report every failure.
// Errors name the file; callers add the tensor.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace mlacheck::io::detail {

// Bytes of a file mapped read-only (mmap); unmapped when destroyed.
class MappedRange {
 public:
  MappedRange(void* base, std::size_t mapped, std::span<const std::byte> bytes)
      : base_(base), mapped_(mapped), bytes_(bytes) {}
  ~MappedRange();
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  void* base_;           // the mapping, from a page boundary
  std::size_t mapped_;   // its length
  std::span<const std::byte> bytes_;  // the bytes asked for, inside it
};

class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::filesystem::path& path);  // throws Error
  ~ReadOnlyFile();
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  uint64_t size() const { return size_; }  // at open time
  // Fills `out` from byte `offset`; throws Error (with `what` in the message) on a short read.
  void read_exact(uint64_t offset, std::span<std::byte> out, const std::string& what) const;
  // Bytes [offset, offset + length) mapped read-only and populated up front (MAP_POPULATE: the
  // kernel maps the page-cache pages in one pass, not one fault per page). Nothing is allocated,
  // zero-filled or copied, which for a multi-GB tensor is most of the cost of read_exact. Throws
  // Error (with `what`) if the file is now shorter than offset + length. The file must not shrink
  // while the mapping lives: then reading a page past the new end raises SIGBUS (as with
  // safetensors' own mmap-based safe_open), where read_exact reports an Error.
  std::shared_ptr<const MappedRange> map(uint64_t offset, std::size_t length,
                                         const std::string& what) const;

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
