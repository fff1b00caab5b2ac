// A signal that another thread takes while a temporary is being created and registered
// (io/detail/temp_cleanup.h) must not leave the temporary behind. In a forked child: a helper thread
// that does not hold the signals back, the child's main thread creating a file under
// CleanupSignalsHeld, a SIGINT sent to the process in between (the kernel hands it to the helper,
// the only thread that takes it), then the registration. The child must end by SIGINT with the file
// gone; with the calling thread's mask alone the helper ran the handler before the registration and
// the file stayed (the race cli.hostile_input hit under load).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "io/detail/temp_cleanup.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

TEST(IoTempCleanup, SignalTakenByAnotherThreadDuringTheRegistrationRemovesTheTemporary) {
  // A shell starts its background jobs with SIGINT ignored (scripts/sanitize.sh's shards); over an
  // ignored signal no handler is installed, by design (SIGINT cannot end such a process), and the
  // child, forked from this process, could not undo that once an earlier test had written a file.
  struct sigaction current {};
  ASSERT_EQ(::sigaction(SIGINT, nullptr, &current), 0);
  if (current.sa_handler == SIG_IGN)
    GTEST_SKIP() << "SIGINT is ignored in this process (a background job): nothing to clean up on it here";
  const testing::ScratchDir dir;
  const std::filesystem::path temp = dir / "out.safetensors.tmp.XXXXXX";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The helper blocks nothing; it sleeps until the process ends.
    std::thread helper([] { std::this_thread::sleep_for(std::chrono::seconds(30)); });
    helper.detach();
    {
      const detail::CleanupSignalsHeld held;
      std::ofstream(temp) << "partial";
      ::kill(::getpid(), SIGINT);  // taken by the helper now, while the file is unregistered
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the helper's handler runs meanwhile
      detail::register_temporary(temp);
    }
    // The deferred signal ends the process when `held` ends; reaching here is a failure.
    std::this_thread::sleep_for(std::chrono::seconds(5));
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)
      << "the child should end by SIGINT; status " << status;
  EXPECT_FALSE(std::filesystem::exists(temp)) << "the temporary was left behind";
}

}  // namespace
}  // namespace mlacheck::io
