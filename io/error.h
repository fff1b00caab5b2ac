#pragma once
// The one exception type of io/: every bad file, bad argument or failed write is reported as an
// io::Error whose message names the file and, where there is one, the tensor. Messages often quote
// bytes of a hostile file, so the constructor makes them printable (io/printable.h): control bytes
// escaped (a NUL would cut what()), at most kMaxMessageChars.
#include <stdexcept>
#include <string>

namespace mlacheck::io {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
};

}  // namespace mlacheck::io
