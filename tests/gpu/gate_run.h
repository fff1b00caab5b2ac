#pragma once
// One strategy's decode on a prepared case, judged as `mlacheck verify` judges it: the gate of
// check/ (kernel error against the emulated output of the strategy's plan, total error against the
// exact output) and the LSE against the emulated LSE. Shared by the GPU decode suite
// (decode_test.cpp) and the suites that run a strategy under another plan (hopper_chunked_test.cpp).
#include <string>

#include "check/gate.h"
#include "check/lse.h"
#include "gpu/registry.h"
#include "problem/kv_cache.h"
#include "ref/decode_emulated.h"
#include "tests/gpu/decode_cases.h"

namespace mlacheck::gpu::test {

struct GateVerdict {
  check::GateReport gate;
  check::LseReport lse;
};

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
// Runs `s` on the case's poisoned device copies (gpu/device_problem.h) and judges its output
// against `emulated` (the recipe on the same plan).
GateVerdict run_through_gate(const Strategy& s, PreparedCase& c, const problem::KvCache& cache,
                             const ref::EmulatedResult& emulated);
#endif

// The LSE check's failure, in one line: its -inf/NaN mismatches and worst entry.
std::string describe_lse(const check::LseReport& lse);

}  // namespace mlacheck::gpu::test
