#include "fuzz/scratch.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>

#include "fuzz/finding.h"

namespace mlacheck::fuzz {

InputFile::InputFile() {
  fd_ = ::memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd_ < 0) finding("memfd_create failed: cannot run the target");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

InputFile::~InputFile() { ::close(fd_); }

const std::string& InputFile::write(std::span<const uint8_t> bytes) {
  if (::ftruncate(fd_, 0) != 0) finding("ftruncate of the input memfd failed");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) finding("writing the input memfd failed");
    done += static_cast<std::size_t>(n);
  }
  return path_;
}

ScratchDir::ScratchDir() {
  std::error_code ec;
  const std::filesystem::path base =
      std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
          ? std::filesystem::path("/dev/shm")
          : std::filesystem::temp_directory_path();
  std::string pattern = (base / "mlacheck-fuzz-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) finding("mkdtemp failed: cannot run the target");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;  // best effort: a leftover scratch directory is no reason to fail a run
  std::filesystem::remove_all(path_, ec);
}

}  // namespace mlacheck::fuzz
