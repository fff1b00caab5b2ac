#pragma once
// The one exception type of io/: every bad file, bad argument or failed write is reported as an
// io::Error whose message names the file and, where there is one, the tensor.
#include <stdexcept>

namespace mlacheck::io {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mlacheck::io
