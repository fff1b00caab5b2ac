#include "io/error.h"

#include "io/printable.h"

namespace mlacheck::io {

Error::Error(const std::string& message)
    : std::runtime_error(printable(message, {.max_chars = kMaxMessageChars, .keep_newlines = true})) {}

}  // namespace mlacheck::io
