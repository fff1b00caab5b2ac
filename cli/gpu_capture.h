#pragma once
// `mlacheck drift --case C --strategy S` (issue 9 item 4d): one of the project's GPU strategies
// run on one case, and what it computed on the way captured in the files `drift` reads: the case's
// golden file (its caches the very bytes the kernel read) and the kernel's output file with its
// intermediates in the golden schema's layout (io/golden.h "Kernel intermediates": lse, split
// partials and LSEs, the quantized Q). The intermediates are read back from the launch's own
// workspace after it ran (gpu/workspace.h): the kernels carry no trace hook, so nothing costs
// anything when drift is not asked for.
#include <filesystem>
#include <string>

#include "gpu/registry.h"
#include "ref/case_spec.h"

namespace mlacheck::cli {

struct CapturedRun {
  std::filesystem::path golden, output;  // written into the capture folder
  std::string recipe;                    // the strategy's recipe, spelled for --recipe
  std::string schedule;                  // the split plan it ran, spelled for --schedule
};

// Throws std::invalid_argument when the strategy does not run the case (its reason) or no GPU is
// usable, gpu::Error when the runtime fails, io::Error when a file cannot be written.
CapturedRun capture_strategy(const ref::CaseSpec& spec, const gpu::Strategy& strategy,
                             const std::filesystem::path& folder);

}  // namespace mlacheck::cli
