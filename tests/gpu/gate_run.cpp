#include "tests/gpu/gate_run.h"

#include <cstddef>
#include <sstream>
#include <vector>

#include "problem/shape.h"
#include "quant/bf16.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#endif

namespace mlacheck::gpu::test {

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
GateVerdict run_through_gate(const Strategy& s, PreparedCase& c, const problem::KvCache& cache,
                             const ref::EmulatedResult& emulated) {
  const ref::Inputs& in = c.inputs();
  DeviceProblem device(in.batch, in.q);
  const RunResult r = device.run(s, cache);
  std::vector<float> out(r.out.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = quant::bf16_to_f32(r.out[i]);
  const check::Gate gate(s.recipe, c.data(), c.layout(), c.exact().out, emulated.out);
  return {gate.judge(out), check::check_lse(r.lse, emulated.lse, c.layout())};
}
#endif

std::string describe_lse(const check::LseReport& lse) {
  std::ostringstream s;
  s << lse.class_mismatches << " -inf/NaN mismatches; worst lse[" << lse.worst_index / problem::kNumHeads
    << "][" << lse.worst_index % problem::kNumHeads << "] = " << lse.worst_got << ", emulated " << lse.worst_ref << " ("
    << lse.worst_units << " units, bound there " << lse.worst_allowed_units << ")";
  return s.str();
}

}  // namespace mlacheck::gpu::test
