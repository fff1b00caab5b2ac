#include "io/atomic_file.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "io/detail/posix_file.h"
#include "io/detail/temp_cleanup.h"
#include "io/error.h"

namespace mlacheck::io {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  // mkstemp's template must end in XXXXXX; the name says what it is for anyone who finds one.
  const std::string pattern = target_.string() + ".tmp.XXXXXX";
  std::string name = pattern;  // mkstemp fills in the X's, even when it fails
  int fd = -1, create_errno = 0;
  {
    const detail::CleanupSignalsHeld held;  // the temporary exists only once it is registered
    fd = ::mkstemp(name.data());
    create_errno = errno;
    if (fd >= 0) cleanup_slot_ = detail::register_temporary(name);
  }
  if (fd < 0) throw Error(detail::errno_message(pattern, "create", create_errno));
  tmp_ = name;
  ::fchmod(fd, 0644);  // mkstemp creates 0600; the outputs are meant to be shared
  file_ = std::make_unique<detail::WriteOnlyFile>(tmp_, fd);
}

AtomicFile::~AtomicFile() {
  detail::unregister_temporary(cleanup_slot_);
  if (committed_) return;
  file_.reset();
  std::error_code ignored;  // best effort: the error that got us here is the one worth reporting
  std::filesystem::remove(tmp_, ignored);
}

void AtomicFile::write(std::span<const std::byte> bytes) { file_->write_all(bytes); }

void AtomicFile::write(std::string_view text) { write(std::as_bytes(std::span(text))); }

void AtomicFile::commit() {
  file_->sync_and_close();
  std::error_code ec;
  std::filesystem::rename(tmp_, target_, ec);
  if (!ec) {  // the name is the target's now: a signal must not remove it
    detail::unregister_temporary(cleanup_slot_);
    cleanup_slot_ = -1;
  }
  if (ec) throw Error(target_.string() + ": renaming " + tmp_.string() + " onto it failed: " + ec.message());
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& target, std::span<const std::byte> bytes) {
  AtomicFile f(target);
  f.write(bytes);
  f.commit();
}

void write_file_atomically(const std::filesystem::path& target, std::string_view text) {
  write_file_atomically(target, std::as_bytes(std::span(text)));
}

}  // namespace mlacheck::io
