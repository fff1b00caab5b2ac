#pragma once
// A report line for the commonest way a correct third-party kernel fails the default convention:
// it leaves the rows of queries with no visible key undefined (the Triton kernels measured write
// NaN there), and nothing else is wrong with it.
#include <optional>
#include <span>
#include <string>

#include "check/layout.h"

namespace mlacheck::cli {

// When some element of a row with no key is not 0 and every non-finite element of `output`
// ([T, 16, 512]) lies in such rows: a line saying so and naming `--empty-rows any`.
std::optional<std::string> empty_rows_hint(std::span<const float> output, const check::OutputLayout& layout);

}  // namespace mlacheck::cli
