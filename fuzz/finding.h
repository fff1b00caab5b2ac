#pragma once
// How a fuzz target reports that the code under test got an input wrong: a message, then abort(),
// so libFuzzer saves the input as crash-<sha1> and the run (and CI) fails. An exception the
// target does not expect is left to escape instead: libFuzzer reports it as a crash the same way.
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace mlacheck::fuzz {

[[noreturn]] inline void finding(std::string_view what) {
  std::fprintf(stderr, "fuzz finding: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

// `call` must throw exactly `Error` (the documented error of a call the input makes invalid).
template <class Error, class Call>
void expect_throws(Call&& call, std::string_view what) {
  try {
    call();
  } catch (const Error&) {
    return;
  }
  finding(what);
}

}  // namespace mlacheck::fuzz
