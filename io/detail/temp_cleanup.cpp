#include "io/detail/temp_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace mlacheck::io::detail {
namespace {

// mlacheck writes one file at a time per thread; 16 covers every writer it has with room to spare.
constexpr int kSlots = 16;
constexpr std::size_t kPathBytes = 4096;  // PATH_MAX on Linux

struct Slot {
  std::atomic<bool> live{false};
  char path[kPathBytes] = {};
};
std::array<Slot, kSlots> slots;
std::mutex claim_mutex;  // claiming a slot is not done in the handler, so a mutex is fine

constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};

// Creations in progress (CleanupSignalsHeld), and a signal the handler deferred until they end.
std::atomic<int> creating{0};
std::atomic<int> deferred_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "used in a signal handler");

extern "C" void remove_temporaries_and_reraise(int sig) {
  if (creating.load() > 0) {  // a temporary may exist unregistered: its creator raises sig again
    deferred_signal.store(sig);
    // Unless the last creation ended between the load and the store, and took no signal: then
    // whichever of the two takes it back from deferred_signal raises it.
    if (creating.load() > 0 || deferred_signal.exchange(0) == 0) return;
  }
  for (Slot& s : slots)
    if (s.live.load()) ::unlink(s.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : kSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction act {};
      act.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&act.sa_mask);
      ::sigaction(sig, &act, nullptr);
    }
  });
}

}  // namespace

int register_temporary(const std::filesystem::path& path) {
  const std::string& s = path.native();
  if (s.size() >= kPathBytes) return -1;
  install_handlers_once();
  const std::lock_guard lock(claim_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].live.load()) continue;
    std::memcpy(slots[i].path, s.c_str(), s.size() + 1);
    slots[i].live.store(true);  // after the path: the handler never sees a half-written one
    return i;
  }
  return -1;
}

CleanupSignalsHeld::CleanupSignalsHeld() {
  install_handlers_once();  // before the first temporary exists, not at its registration
  sigset_t held;
  sigemptyset(&held);
  for (const int sig : kSignals) sigaddset(&held, sig);
  ::pthread_sigmask(SIG_BLOCK, &held, &before_);
  creating.fetch_add(1);
}

CleanupSignalsHeld::~CleanupSignalsHeld() {
  // A signal taken from here on finds no creation in progress and runs the cleanup itself.
  const bool last = creating.fetch_sub(1) == 1;
  ::pthread_sigmask(SIG_SETMASK, &before_, nullptr);
  if (const int sig = last ? deferred_signal.exchange(0) : 0; sig != 0) ::raise(sig);
}

void unregister_temporary(int slot) {
  if (slot >= 0 && slot < kSlots) slots[slot].live.store(false);
}

}  // namespace mlacheck::io::detail
