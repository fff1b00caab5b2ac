#include "gpu/error.h"

#include <utility>

namespace mlacheck::gpu {

namespace {

std::string describe(const std::string& call, const std::string& file, int line, int code,
                     const std::string& runtime_message) {
  return file + ":" + std::to_string(line) + ": GPU call `" + call + "` failed: " +
         runtime_message + " (error " + std::to_string(code) + ")";
}

}  // namespace

Error::Error(std::string call, std::string file, int line, int code, std::string runtime_message)
    : std::runtime_error(describe(call, file, line, code, runtime_message)),
      call_(std::move(call)),
      file_(std::move(file)),
      line_(line),
      code_(code),
      runtime_message_(std::move(runtime_message)) {}

void fail(const char* call, const char* file, int line, int code, const char* runtime_message) {
  throw Error(call != nullptr ? call : "?", file != nullptr ? file : "?", line, code,
              runtime_message != nullptr ? runtime_message : "(no message)");
}

}  // namespace mlacheck::gpu
