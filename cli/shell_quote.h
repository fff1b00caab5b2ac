#pragma once
// Quoting for the `repro:` lines the reports print: a word that needs no quoting is printed as it
// is, anything else in single quotes (POSIX sh), so the line can be pasted into a shell.
#include <string>
#include <string_view>

namespace mlacheck::cli {

inline std::string shell_quote(std::string_view word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-+=./:,@%") == std::string_view::npos;
  if (plain) return std::string(word);
  std::string s = "'";
  for (char c : word) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

}  // namespace mlacheck::cli
