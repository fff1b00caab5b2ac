#pragma once
// Text that came from a file, made safe to print in a message: control bytes (NUL among them, which
// would also cut a C string such as what()) are written as \xNN, and a long text keeps its head and
// tail around a note of how much was left out, so a 66 MB header cannot become a 99 MB line.
#include <cstddef>
#include <string>
#include <string_view>

namespace mlacheck::io {

// Enough to show a case-list line or a header excerpt whole; longer echoes are elided.
inline constexpr std::size_t kMaxEchoChars = 240;
// The cap of a whole error message (main): every message mlacheck builds is far shorter.
inline constexpr std::size_t kMaxMessageChars = 4096;

struct PrintableOptions {
  std::size_t max_chars = kMaxEchoChars;
  bool keep_newlines = false;  // messages may span lines; an echoed file line never does
};

std::string printable(std::string_view text, PrintableOptions options = {});

}  // namespace mlacheck::io
