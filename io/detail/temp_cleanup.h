#pragma once
// Temporaries still being written are removed when SIGINT, SIGTERM or SIGHUP ends the process
// (issue 11 item 9: a Ctrl-C during a write used to leave OUT.tmp behind). The handler only calls
// unlink and re-raises the signal with its default action, both async-signal-safe; it is installed
// on the first registration and only over a default disposition, never over a caller's handler.
#include <signal.h>

#include <filesystem>

namespace mlacheck::io::detail {

// While alive, a temporary is being created and registered: the calling thread holds those signals
// back, and the handler, when another thread takes one (a process signal goes to any thread that
// does not block it: gen's OpenMP workers), only notes it; the last creation to end raises it
// again, and the handler then finds the temporary registered. So a signal that lands between the
// two cannot leave it behind (cli.hostile_input saw it under load: with the calling thread's mask
// alone, a worker thread ran the handler before the registration).
class CleanupSignalsHeld {
 public:
  CleanupSignalsHeld();
  ~CleanupSignalsHeld();
  CleanupSignalsHeld(const CleanupSignalsHeld&) = delete;
  CleanupSignalsHeld& operator=(const CleanupSignalsHeld&) = delete;

 private:
  sigset_t before_;
};

// Returns a slot for unregister_temporary(), or -1 when every slot is taken (then the temporary is
// only cleaned up by the usual paths: a process with that many open writes is not ours).
int register_temporary(const std::filesystem::path& path);
void unregister_temporary(int slot);

}  // namespace mlacheck::io::detail
