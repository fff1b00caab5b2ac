#pragma once
// The message of the io::Error that `f` throws; a test failure (and "") if it throws nothing.
#include <string>

#include <gtest/gtest.h>

#include "io/error.h"

namespace mlacheck::io::testing {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no io::Error thrown";
  return {};
}

}  // namespace mlacheck::io::testing
