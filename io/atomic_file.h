#pragma once
// The one way mlacheck writes a file (issue 11, items 3-4): the bytes go to a temporary of a
// unique name beside the target (mkstemp: O_CREAT | O_EXCL, so a link or another writer's file at
// that name is never opened), are fsynced, closed with the result checked, and renamed onto the
// target. A reader sees the old file or the whole new one; two writers of one target each write
// their own temporary, and the last rename wins with a complete file. On any failure, or when
// the object is destroyed without commit(), the temporary is removed; on SIGINT, SIGTERM or
// SIGHUP too (detail/temp_cleanup.h).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>

namespace mlacheck::io {

namespace detail {
class WriteOnlyFile;
}

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);  // throws Error naming the target
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const std::byte> bytes);  // throws Error
  void write(std::string_view text);
  void commit();  // fsync, checked close, rename onto the target; throws Error

  const std::filesystem::path& temporary() const { return tmp_; }

 private:
  std::filesystem::path target_, tmp_;
  std::unique_ptr<detail::WriteOnlyFile> file_;
  bool committed_ = false;
  int cleanup_slot_ = -1;  // detail/temp_cleanup.h: removed on SIGINT/SIGTERM/SIGHUP while live
};

// The whole file at once.
void write_file_atomically(const std::filesystem::path& target, std::span<const std::byte> bytes);
void write_file_atomically(const std::filesystem::path& target, std::string_view text);

}  // namespace mlacheck::io
