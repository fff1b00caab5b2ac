#include "io/printable.h"

#include <fmt/format.h>

namespace mlacheck::io {
namespace {

void append_escaped(std::string& out, std::string_view text, bool keep_newlines) {
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if ((byte < 0x20 && !(keep_newlines && (ch == '\n' || ch == '\t'))) || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += ch;
  }
}

}  // namespace

std::string printable(std::string_view text, PrintableOptions options) {
  std::string out;
  if (text.size() <= options.max_chars) {
    append_escaped(out, text, options.keep_newlines);
    return out;
  }
  const std::size_t head = options.max_chars * 2 / 3, tail = options.max_chars - head;
  append_escaped(out, text.substr(0, head), options.keep_newlines);
  out += fmt::format(" [... {} bytes left out ...] ", text.size() - head - tail);
  append_escaped(out, text.substr(text.size() - tail), options.keep_newlines);
  return out;
}

}  // namespace mlacheck::io
