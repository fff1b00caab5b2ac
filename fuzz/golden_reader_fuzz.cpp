// Fuzz target: what `mlacheck compare` reads (cli/golden_inputs.h): the golden file through
// read_judged_golden (read_case with its finiteness checks, out_exact, lse_exact, the stored
// schedules) with each set of caches a recipe asks for, then each recipe's cache and stored
// emulation as compare takes them; and the same bytes as the kernel's output file (the output and
// LSE tensor readers). Oracle: only the documented errors escape: io::Error,
// problem::ProblemError and the std::invalid_argument the judging commands throw. Anything else
// (std::out_of_range, std::length_error, std::bad_alloc from deep inside: a missing check; a
// sanitizer report) is a finding.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cli/golden_inputs.h"
#include "fuzz/scratch.h"
#include "io/error.h"
#include "problem/error.h"
#include "problem/recipe.h"

namespace {

namespace cli = mlacheck::cli;
namespace io = mlacheck::io;
namespace problem = mlacheck::problem;

// Runs `call`; the documented refusals are fine (problem::ProblemError is an invalid_argument).
template <class Call>
void refused_or_done(Call&& call) {
  try {
    call();
  } catch (const io::Error&) {
  } catch (const std::invalid_argument&) {
  }
}

void judge_golden(const std::string& path, cli::CachesToRead caches) {
  refused_or_done([&] {
    const cli::JudgedGolden g = cli::read_judged_golden(path, caches);
    for (const problem::Recipe& r : problem::recipes()) {
      refused_or_done([&] { (void)g.cache(r); });  // refused when the file lacks that cache
      if (const auto it = g.stored.find(std::string(r.name)); it != g.stored.end())
        refused_or_done([&] { (void)g.stored_output(r, it->second); });
    }
  });
}

void read_as_output(const std::string& path) {
  refused_or_done([&] {
    const io::SafetensorsReader r(path);
    for (const std::string& name : r.names()) {
      const auto& shape = r.info(name).shape;
      for (const int64_t tokens : {int64_t{1}, shape.empty() ? int64_t{1} : shape[0]}) {
        refused_or_done([&] { (void)cli::read_output_tensor(r, name, tokens); });
        refused_or_done([&] { (void)cli::read_lse_tensor(r, name, tokens); });
      }
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mlacheck::fuzz::InputFile input;
  const std::string& path = input.write({data, size});
  // compare reads only its recipe's cache: bf16 (neither), fp8, mxfp4.
  using Caches = cli::CachesToRead;
  for (const Caches caches : {Caches{false, false}, Caches{true, false}, Caches{false, true}})
    judge_golden(path, caches);
  read_as_output(path);
  return 0;
}
