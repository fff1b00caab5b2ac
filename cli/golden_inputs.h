#pragma once
// A golden file as the judging commands (compare, identify, drift) read it: the inputs and caches
// (cli/golden_case.h read_case, with its finiteness checks), the exact output and LSE, the
// data's scale for the bounds, and the emulated outputs stored for the presets with the schedule
// each was made with. Any other (recipe, schedule) is emulated on the fly from the same inputs.
#include <CLI/CLI.hpp>
#include <map>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "check/data_scale.h"
#include "check/layout.h"
#include "check/schedule_envelope.h"
#include "check/tolerance.h"
#include "cli/golden_case.h"
#include "io/safetensors.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "problem/schedule.h"
#include "ref/decode_emulated.h"
#include "ref/progress.h"

namespace mlacheck::cli {

struct JudgedGolden {
  std::string path;
  std::map<std::string, std::string> metadata;  // as the file has it
  GoldenCase inputs;                            // q, kv, batch, both quantized caches
  std::vector<float> exact, exact_lse;          // out_exact [T, 16, 512], lse_exact [T, 16] (if any)
  check::DataScale data;
  check::OutputLayout layout{{}, {}};
  // The presets with a stored out_<r>, and the schedule each was emulated with (metadata
  // recipe_schedules).
  std::map<std::string, problem::Schedule> stored;

  // The cache a recipe reads (spans into `inputs`).
  problem::KvCache cache(const problem::Recipe& recipe) const;
  // The stored emulation when it is exactly (recipe, schedule): same numerics as the preset and
  // the schedule it was made with; otherwise nothing.
  std::optional<std::vector<uint16_t>> stored_output(const problem::Recipe& recipe,
                                                     const problem::Schedule& schedule) const;
  ref::EmulatedResult emulate(const problem::Recipe& recipe, const problem::Schedule& schedule,
                              const ref::EmulationOptions& options = {},
                              ref::Progress* progress = nullptr) const;
};

// Throws std::invalid_argument / io::Error / problem::ProblemError naming the file and tensor.
// `caches`: the quantized caches the command's recipes read (the rest stay on disk).
JudgedGolden read_judged_golden(const std::string& path, CachesToRead caches = {});
CachesToRead caches_for(const problem::Recipe& recipe);

// The kernel's tensor `name` of shape [T, 16, 512] (or leading dims multiplying to T) widened to
// float; BF16, F16 or F32. Missing: nullopt.
std::optional<std::vector<float>> read_output_tensor(const io::SafetensorsReader& file,
                                                     const std::string& name, int64_t tokens);
// Any F32/BF16/F16 tensor widened to float, with its shape checked against `shape` (-1 = any).
std::optional<std::vector<float>> read_float_tensor(const io::SafetensorsReader& file,
                                                    const std::string& name,
                                                    const std::vector<int64_t>& shape,
                                                    std::vector<int64_t>* actual_shape = nullptr);

// The single-pass emulation with its weight sensitivity, the schedule-free kernel bound
// (check/tolerance.h) derived from it, and the envelope's controls (check/schedule_envelope.h): what
// judges a kernel whose schedule is not declared.
struct ScheduleFree {
  ref::EmulatedResult emulation;
  check::Bound bound;
  check::EnvelopeControls envelope;
};
// The envelope's controls: the recipe emulated with each of these schedules on a sample of at most
// kEnvelopeRequests requests (evenly spaced among those with keys; every query of each).
inline constexpr std::array<const char*, 4> kEnvelopeSchedules{"splits=7,tile=16", "splits=32,tile=64",
                                                               "splits=256", "single,tile=1"};
inline constexpr int64_t kEnvelopeRequests = 8;
ScheduleFree schedule_free(const problem::Batch& batch, std::span<const uint16_t> q,
                           const problem::KvCache& cache, const problem::Recipe& recipe,
                           const check::DataScale& data, const check::OutputLayout& layout,
                           ref::Progress* progress = nullptr);

// The recipe with a declared schedule's split count and tile, as kernel_bound reads them: its
// split-partial term takes the count (the declared N; 2 for the kinds whose count varies per
// request: >= 2 keeps the term, and per split it then assumes half a row, more than any real split
// of those kinds; 1 for a single pass).
problem::Recipe with_schedule(problem::Recipe recipe, const problem::Schedule& schedule);

// The kernel's LSE [T, 16] (natural log): any shape that is [T, 16] once its 1-sized dims are
// dropped ([T, 16, 1] as FlashMLA's [b, h, s_q] is for s_q = 1). Missing: nullopt.
std::optional<std::vector<float>> read_lse_tensor(const io::SafetensorsReader& file,
                                                  const std::string& name, int64_t tokens);

// A recipe from --recipe plus the field options (--q, --kv, --p, --base, --kv-scale, --partial),
// which CLI11 collects into `fields` as (field, value).
problem::Recipe recipe_from_options(const std::string& spelling,
                                    const std::vector<std::pair<std::string, std::string>>& fields);
// Adds --q, --kv, --p, --base, --kv-scale, --partial to a subcommand, filling `fields` in order.
void add_recipe_field_options(CLI::App* sub,
                              std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace mlacheck::cli
