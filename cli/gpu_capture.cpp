#include "cli/gpu_capture.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/golden_case.h"
#include "cli/gpu_cases.h"
#include "cli/workspace_partials.h"
#include "gpu/availability.h"
#include "gpu/workspace.h"
#include "io/golden.h"
#include "io/safetensors.h"
#include "problem/schedule.h"
#include "problem/shape.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/device_problem.h"
#endif

namespace mlacheck::cli {
namespace {

using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;
namespace it = io::golden::intermediate;

template <class T>
void add(io::SafetensorsWriter& w, std::string_view name, io::DType dtype, std::vector<int64_t> shape,
         const std::vector<T>& values) {
  w.add(std::string(name), io::Tensor::copy_of<T>(dtype, std::move(shape), values));
}

}  // namespace

CapturedRun capture_strategy(const ref::CaseSpec& spec, const gpu::Strategy& s,
                             const std::filesystem::path& folder) {
#if !defined(MLACHECK_HAVE_GPU_RUNTIME)
  (void)spec;
  (void)s;
  (void)folder;
  throw std::invalid_argument("drift --strategy runs the strategy on a GPU: " +
                              gpu::unavailable_reason().value_or("no GPU runtime"));
#else
  if (const auto why = gpu::unavailable_reason())
    throw std::invalid_argument("drift --strategy runs the strategy on a GPU: " + *why);
  PreparedCase pc(spec);
  const ref::Inputs& in = pc.inputs();
  const problem::Batch& batch = in.batch;
  const problem::KvCache cache = pc.cache_for(s.recipe);
  if (const auto why = s.supports(batch, cache))
    throw std::invalid_argument(fmt::format("strategy {} does not run case {}: {}", s.name, spec.name, *why));

  // The golden file of the case, holding the caches the kernel reads (as stored, not derived), so
  // that drift's emulation reads the same codes.
  GoldenCase c = generate_case(spec);
  if (cache.format == problem::KvFormat::fp8)
    c.fp8 = Fp8CacheData{false, std::vector<uint8_t>(cache.fp8.begin(), cache.fp8.end()), cache.fp8_scale};
  if (cache.format == problem::KvFormat::mxfp4)
    c.mxfp4 = Mxfp4CacheData{false, std::vector<uint8_t>(cache.mxfp4.begin(), cache.mxfp4.end()),
                             std::vector<uint8_t>(cache.mxfp4_scale.begin(), cache.mxfp4_scale.end())};
  complete(c, {});

  // The launch, and its workspace as it left it.
  const int multiprocessors = gpu::planning_multiprocessors();
  const problem::SplitPlan plan = s.emulated_plan(batch, multiprocessors);
  gpu::DeviceProblem device(batch, in.q);
  const gpu::RunResult r = device.run(s, cache, gpu::KeepWorkspace::yes);
  const gpu::WorkspaceLayout w = gpu::workspace_layout(s.recipe, plan, batch.total_q(),
                                                       batch.num_requests(), batch.max_kv_len());
  const int64_t tokens = batch.total_q();
  const auto rows = static_cast<std::size_t>(tokens) * kNumHeads;

  io::SafetensorsWriter out;
  out.set_metadata("strategy", s.name);
  out.set_metadata("case", case_line(spec));
  add(out, "out", io::DType::BF16, {tokens, kNumHeads, kVDim}, r.out);
  add(out, it::lse, io::DType::F32, {tokens, kNumHeads}, r.lse);

  // Q as the kernel quantized it.
  switch (s.recipe.q) {
    case problem::QFormat::bf16:
      break;
    case problem::QFormat::mxfp4_dynamic:
      add(out, it::q_mxfp4, io::DType::U8, {tokens, kNumHeads, problem::kMxfp4RowBytes},
          workspace_region<uint8_t>(r.workspace, w.q_codes, rows * problem::kMxfp4RowBytes));
      add(out, it::q_mxfp4_scale, io::DType::U8, {tokens, kNumHeads, problem::kMxfp4RowScales},
          workspace_region<uint8_t>(r.workspace, w.q_block_scales, rows * problem::kMxfp4RowScales));
      break;
    default:
      add(out, it::q_fp8, io::DType::U8, {tokens, kNumHeads, kQkDim},
          workspace_region<uint8_t>(r.workspace, w.q_codes, rows * kQkDim));
      if (w.q_scale != gpu::WorkspaceLayout::kAbsent)
        add(out, it::q_scale, io::DType::F32, {1}, workspace_region<float>(r.workspace, w.q_scale, 1));
  }

  // The split partials in the schema's layout (cli/workspace_partials.h).
  if (plan.split_k()) {
    const SchemaPartials p = schema_partials(batch, plan, w, r.workspace, s.recipe.base == problem::SoftmaxBase::two);
    add(out, it::partial_out, io::DType::F32, {tokens, p.splits, kNumHeads, kVDim}, p.out);
    add(out, it::partial_lse, io::DType::F32, {tokens, p.splits, kNumHeads}, p.lse);
  }

  std::filesystem::create_directories(folder);
  std::string tag = s.name;
  std::replace(tag.begin(), tag.end(), '/', '_');
  CapturedRun run;
  run.golden = folder / (spec.name + ".safetensors");
  run.output = folder / (spec.name + "." + tag + ".safetensors");
  write_case(c, run.golden);
  out.write(run.output);
  run.recipe = problem::spell(s.recipe);
  run.schedule = problem::to_string(problem::Schedule::from_plan(plan, s.recipe.softmax_tile));
  return run;
#endif
}

}  // namespace mlacheck::cli
