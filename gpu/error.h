#pragma once
// The one exception type of the GPU layer. Plain C++ (no runtime header), so that code built
// without a GPU runtime -- main, the tests -- can catch it and choose an exit code: libraries never
// exit.
#include <stdexcept>
#include <string>

namespace mlacheck::gpu {

// A failed GPU runtime call: what was called, where, and the runtime's own code and message.
class Error : public std::runtime_error {
 public:
  Error(std::string call, std::string file, int line, int code, std::string runtime_message);

  const std::string& call() const noexcept { return call_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int code() const noexcept { return code_; }
  const std::string& runtime_message() const noexcept { return runtime_message_; }

 private:
  std::string call_;
  std::string file_;
  int line_;
  int code_;
  std::string runtime_message_;
};

// Throws Error. The single exit of every failed check (MLACHECK_GPU_CHECK in gpu/platform.h),
// out of line so the check's fast path stays one comparison.
[[noreturn]] void fail(const char* call, const char* file, int line, int code,
                       const char* runtime_message);

}  // namespace mlacheck::gpu
