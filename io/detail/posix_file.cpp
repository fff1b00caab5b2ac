#include "io/detail/posix_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/error.h"

namespace mlacheck::io::detail {

std::string errno_message(const std::filesystem::path& path, const std::string& what, int err) {
  return path.string() + ": " + what + " failed: " + std::strerror(err);
}

ReadOnlyFile::ReadOnlyFile(const std::filesystem::path& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; the
  // fstat below then refuses it. On a regular file the flag changes nothing.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw Error(errno_message(path, "open", errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw Error(errno_message(path, "stat", err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(path.string() + ": not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ReadOnlyFile::read_exact(uint64_t offset, std::span<std::byte> out,
                              const std::string& what) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = offset + done;
    if (at > static_cast<uint64_t>(INT64_MAX))
      throw Error(path_.string() + ": " + what + ": offset " + std::to_string(at) + " out of range");
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(at));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(errno_message(path_, "reading " + what, errno));
    }
    // The size was checked at open: end of file here means the file shrank since.
    if (n == 0)
      throw Error(path_.string() + ": " + what + ": file ended after " +
                  std::to_string(offset + done) + " bytes (truncated while open?)");
    done += static_cast<std::size_t>(n);
  }
}

MappedRange::~MappedRange() {
  if (mapped_ > 0) ::munmap(base_, mapped_);
}

std::shared_ptr<const MappedRange> ReadOnlyFile::map(uint64_t offset, std::size_t length,
                                                     const std::string& what) const {
  if (length == 0) return std::make_shared<const MappedRange>(nullptr, 0, std::span<const std::byte>());
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw Error(errno_message(path_, "stat", errno));
  const auto now = static_cast<uint64_t>(st.st_size);
  if (offset > now || length > now - offset)
    throw Error(path_.string() + ": " + what + ": file ended after " + std::to_string(now) +
                " bytes (truncated while open?)");
  // mmap's offset must be a multiple of the page size: map from the page holding `offset`.
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const std::size_t mapped = length + static_cast<std::size_t>(offset - start);
  void* base = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(start));
  if (base == MAP_FAILED) throw Error(errno_message(path_, "mapping " + what, errno));
  const auto* first = static_cast<const std::byte*>(base) + (offset - start);
  return std::make_shared<const MappedRange>(base, mapped, std::span(first, length));
}

WriteOnlyFile::WriteOnlyFile(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(errno_message(path, "create", errno));
}

WriteOnlyFile::WriteOnlyFile(const std::filesystem::path& path, int fd) : path_(path), fd_(fd) {}

WriteOnlyFile::~WriteOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

void WriteOnlyFile::write_all(std::span<const std::byte> data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(errno_message(path_, "write", errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

void WriteOnlyFile::sync_and_close() {
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(errno_message(path_, "fsync", err));
  }
  if (::close(fd) != 0) throw Error(errno_message(path_, "close", errno));
}

}  // namespace mlacheck::io::detail
