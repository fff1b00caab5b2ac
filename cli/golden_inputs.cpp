#include "cli/golden_inputs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "io/golden.h"
#include "problem/error.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/fp8.h"

namespace mlacheck::cli {
namespace {

namespace gt = io::golden::tensor;
namespace gm = io::golden::meta;
using problem::kNumHeads;
using problem::kVDim;

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

// IEEE binary16 -> float32, exact (the compiler's conversion; quant/ has no f16 codec, and output
// files from PyTorch may hold F16).
float f16_to_f32(uint16_t bits) { return static_cast<float>(__builtin_bit_cast(_Float16, bits)); }

// "name:splits:tile,..." (io/golden.h recipe_schedules) -> schedule per preset.
std::map<std::string, problem::Schedule> parse_stored(const std::string& path,
                                                      const std::string& text) {
  std::map<std::string, problem::Schedule> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t a = item.find(':'), b = item.rfind(':');
    int splits = 0, tile = 0;
    const auto num = [&](std::size_t from, std::size_t to, int& v) {
      const auto [p, ec] = std::from_chars(item.data() + from, item.data() + to, v);
      return ec == std::errc() && p == item.data() + to && v >= 0;
    };
    if (a == std::string::npos || a == b || !num(a + 1, b, splits) || !num(b + 1, item.size(), tile))
      fail(fmt::format("{}: __metadata__ recipe_schedules entry '{}' is not name:splits:tile", path,
                       item));
    out[item.substr(0, a)] = splits > 0 ? problem::Schedule::uniform(splits, tile)
                                        : problem::Schedule::single(tile);
    start = end + 1;
  }
  return out;
}

std::vector<float> widen(const io::Tensor& t, const std::string& file, const std::string& name) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  switch (t.dtype) {
    case io::DType::BF16: {
      const auto v = t.view<uint16_t>();
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = quant::bf16_to_f32(v[i]);
      break;
    }
    case io::DType::F16: {
      const auto v = t.view<uint16_t>();
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = f16_to_f32(v[i]);
      break;
    }
    case io::DType::F32: {
      const auto v = t.view<float>();
      out.assign(v.begin(), v.end());
      break;
    }
    default:
      fail(fmt::format("{}: tensor '{}' has dtype {}; expected BF16, F16 or F32", file, name,
                       io::dtype_name(t.dtype)));
  }
  return out;
}

// A golden file whose references or caches are not finite where the batch reads them would judge
// nothing (NaN matches NaN): refuse it, naming the tensor and index (issue 11, item 2).
void check_references(const JudgedGolden& g) {
  const problem::Batch& b = g.inputs.batch;
  for (int64_t t = 0; t < g.layout.tokens(); ++t) {
    if (g.layout.visible_kv(t) == 0) continue;
    for (int64_t i = t * kNumHeads * kVDim; i < (t + 1) * kNumHeads * kVDim; ++i)
      if (!std::isfinite(g.exact[static_cast<std::size_t>(i)]))
        fail(fmt::format("{}: tensor '{}' is {} at [{}, {}, {}], a query that sees keys: not a "
                         "usable golden file",
                         g.path, gt::out_exact, g.exact[static_cast<std::size_t>(i)], t,
                         i / kVDim % kNumHeads, i % kVDim));
  }
  if (g.inputs.fp8) {
    const std::span<const uint8_t> codes = g.inputs.fp8->codes;
    if (const auto p = first_fp8_nan(b, codes))
      fail(fmt::format("{}: tensor '{}' holds the NaN code 0x{:02X} at [{}, 0, {}], key {} of "
                       "request {}",
                       g.path, gt::kv_fp8, codes[static_cast<std::size_t>(p->row * problem::kQkDim + p->element)],
                       p->row, p->element, p->key, p->request));
  }
  if (g.inputs.mxfp4) {
    if (const auto p = first_e8m0_nan(b, g.inputs.mxfp4->scales))
      fail(fmt::format("{}: tensor '{}' holds the NaN scale 0xFF at [{}, 0, {}], key {} of "
                       "request {}",
                       g.path, gt::kv_mxfp4_scale, p->row, p->element, p->key, p->request));
  }
}

}  // namespace

problem::KvCache JudgedGolden::cache(const problem::Recipe& r) const {
  if ((r.kv == problem::KvFormat::fp8 && !inputs.fp8) ||
      (r.kv == problem::KvFormat::mxfp4 && !inputs.mxfp4))
    fail(fmt::format("{}: recipe {} reads the {} cache (tensor '{}'), which the golden file does "
                     "not hold (make it with `mlacheck ref`)",
                     path, problem::spell(r), problem::to_string(r.kv),
                     r.kv == problem::KvFormat::fp8 ? gt::kv_fp8 : gt::kv_mxfp4));
  if (r.kv == problem::KvFormat::fp8 && r.fp8 != quant::Fp8Format::e4m3fn)
    fail(fmt::format("{}: recipe {} reads e4m3fnuz; the golden file's kv_fp8 is e4m3fn", path,
                     problem::spell(r)));
  return golden_cache(inputs, r);
}

std::optional<std::vector<uint16_t>> JudgedGolden::stored_output(
    const problem::Recipe& recipe, const problem::Schedule& schedule) const {
  const auto preset = problem::find_recipe(recipe.name);
  const auto it = stored.find(std::string(recipe.name));
  if (!preset || it == stored.end() || !problem::same_numerics(*preset, recipe) ||
      !(it->second == schedule))
    return std::nullopt;
  const io::SafetensorsReader r(path);
  const std::string name = io::golden::out_name(recipe.name);
  const io::Tensor t = io::read_checked(r, name, io::DType::BF16, 3);
  if (t.numel() != layout.elements())
    fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}, 16, 512]", path, name,
                     t.shape_string(), layout.tokens()));
  return std::vector<uint16_t>(t.view<uint16_t>().begin(), t.view<uint16_t>().end());
}

ref::EmulatedResult JudgedGolden::emulate(const problem::Recipe& recipe,
                                          const problem::Schedule& schedule,
                                          const ref::EmulationOptions& options,
                                          ref::Progress* progress) const {
  return ref::decode_emulated(inputs.batch, inputs.q, cache(recipe), recipe, schedule, options,
                              progress);
}

CachesToRead caches_for(const problem::Recipe& recipe) {
  return {recipe.kv == problem::KvFormat::fp8, recipe.kv == problem::KvFormat::mxfp4};
}

JudgedGolden read_judged_golden(const std::string& path, CachesToRead caches) {
  const io::SafetensorsReader r(path);
  require_memory(judging_bytes(case_size(r), caches.fp8, caches.mxfp4), "judging against " + path);
  const auto schema = r.metadata().find(std::string(gm::schema));
  if (schema != r.metadata().end() && schema->second != io::golden::kSchema)
    fail(fmt::format("{}: golden schema '{}', this mlacheck reads '{}'", path, schema->second,
                     io::golden::kSchema));
  JudgedGolden g{path, r.metadata(), read_case(r, caches), {}, {}, {}, check::OutputLayout({}, {}), {}};
  const problem::Batch& b = g.inputs.batch;
  const int64_t tokens = b.total_q();
  if (!r.contains(gt::out_exact))
    fail(fmt::format("{}: no tensor '{}': not a golden file (complete it with `mlacheck ref`)",
                     path, gt::out_exact));
  const io::Tensor exact = io::read_checked(r, gt::out_exact, io::DType::F32, 3);
  if (exact.shape != std::vector<int64_t>{tokens, kNumHeads, kVDim})
    fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}, {}]", path, gt::out_exact,
                     exact.shape_string(), tokens, kNumHeads, kVDim));
  g.exact.assign(exact.view<float>().begin(), exact.view<float>().end());
  if (r.contains(gt::lse_exact)) {
    const io::Tensor lse = io::read_checked(r, gt::lse_exact, io::DType::F32, 2);
    if (lse.shape != std::vector<int64_t>{tokens, kNumHeads})
      fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}]", path, gt::lse_exact,
                       lse.shape_string(), tokens, kNumHeads));
    g.exact_lse.assign(lse.view<float>().begin(), lse.view<float>().end());
  }
  g.data = check::data_scale(g.inputs.q, g.inputs.kv, b);
  g.layout = check::OutputLayout::from_batch(b);
  check_references(g);
  if (const auto s = g.metadata.find(std::string(gm::recipe_schedules)); s != g.metadata.end())
    g.stored = parse_stored(path, s->second);
  for (auto it = g.stored.begin(); it != g.stored.end();)
    it = r.contains(io::golden::out_name(it->first)) ? std::next(it) : g.stored.erase(it);
  return g;
}

std::optional<std::vector<float>> read_float_tensor(const io::SafetensorsReader& file,
                                                    const std::string& name,
                                                    const std::vector<int64_t>& shape,
                                                    std::vector<int64_t>* actual_shape) {
  if (!file.contains(name)) return std::nullopt;
  const io::Tensor t = file.read(name);
  bool ok = t.shape.size() == shape.size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i)
    ok = shape[i] < 0 || shape[i] == t.shape[i];
  if (!ok) {
    std::string want;
    for (int64_t d : shape) want += (want.empty() ? "" : ", ") + (d < 0 ? "*" : std::to_string(d));
    fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}]", file.path().string(), name,
                     t.shape_string(), want));
  }
  if (actual_shape) *actual_shape = t.shape;
  return widen(t, file.path().string(), name);
}

std::optional<std::vector<float>> read_output_tensor(const io::SafetensorsReader& file,
                                                     const std::string& name, int64_t tokens) {
  if (!file.contains(name)) return std::nullopt;
  const io::Tensor t = file.read(name);
  int64_t leading = 1;
  for (std::size_t i = 0; i + 2 < t.shape.size(); ++i) leading *= t.shape[i];
  const bool shape_ok = t.shape.size() >= 3 && t.shape[t.shape.size() - 2] == kNumHeads &&
                        t.shape.back() == kVDim && leading == tokens;
  if (!shape_ok)
    fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}, {}] (the golden file's T = {})",
                     file.path().string(), name, t.shape_string(), tokens, kNumHeads, kVDim,
                     tokens));
  return widen(t, file.path().string(), name);
}

ScheduleFree schedule_free(const problem::Batch& batch, std::span<const uint16_t> q,
                           const problem::KvCache& cache, const problem::Recipe& recipe,
                           const check::DataScale& data, const check::OutputLayout& layout,
                           ref::Progress* progress) {
  ref::EmulationOptions o;
  o.sensitivity = true;
  ScheduleFree f{ref::decode_emulated(batch, q, cache, recipe, problem::Schedule::single(), o,
                                      progress),
                 {},
                 {}};
  const std::vector<float> widened = widen_bf16(f.emulation.out);
  const ref::EmulatedResult& e = f.emulation;
  f.bound = check::schedule_free_bound(recipe, data, layout,
                                       {e.pv_spread, e.pv_abs, e.p_underflow, e.p_underflow_abs,
                                        e.pv_spread_all, e.pv_abs_all, e.score_range, widened});
  // The envelope: a few requests suffice (its distances are sums over every element of their
  // rows), so its cost stays a fraction of the single pass's at any batch size.
  std::vector<int64_t> with_keys, sample;
  for (int64_t b = 0; b < batch.num_requests(); ++b)
    if (batch.kv_len(b) > 0) with_keys.push_back(b);
  const auto count = static_cast<int64_t>(with_keys.size());
  const int64_t take = std::min(count, kEnvelopeRequests);
  for (int64_t k = 0; k < take; ++k) sample.push_back(with_keys[static_cast<std::size_t>(k * count / take)]);
  check::EnvelopeControls& env = f.envelope;
  for (int64_t b : sample)
    for (int64_t i = 0; i < batch.q_len(b); ++i) env.tokens.push_back(batch.qo_indptr()[b] + i);
  env.row_sum_rounding = e.row_sum_rounding;
  ref::EmulationOptions only_sample;
  only_sample.requests = sample;
  const std::size_t row_values = static_cast<std::size_t>(problem::kNumHeads) * problem::kVDim;
  for (const char* spelling : kEnvelopeSchedules) {
    const ref::EmulatedResult c =
        ref::decode_emulated(batch, q, cache, recipe, problem::parse_schedule(spelling), only_sample);
    check::EnvelopeControls::Control ctl{spelling, {}};
    ctl.values.reserve(env.tokens.size() * row_values);
    for (int64_t t : env.tokens)
      for (std::size_t i = static_cast<std::size_t>(t) * row_values;
           i < static_cast<std::size_t>(t + 1) * row_values; ++i)
        ctl.values.push_back(quant::bf16_to_f32(c.out[i]));
    env.controls.push_back(std::move(ctl));
  }
  return f;
}

problem::Recipe with_schedule(problem::Recipe recipe, const problem::Schedule& schedule) {
  recipe.num_splits = schedule.kind == problem::Schedule::Kind::splits
                          ? static_cast<int>(schedule.count)
                      : schedule.split_k() ? 2
                                           : 1;
  recipe.softmax_tile = schedule.softmax_tile;
  return recipe;
}

std::optional<std::vector<float>> read_lse_tensor(const io::SafetensorsReader& file,
                                                  const std::string& name, int64_t tokens) {
  if (!file.contains(name)) return std::nullopt;
  const io::Tensor t = file.read(name);
  std::vector<int64_t> squeezed;
  for (int64_t d : t.shape)
    if (d != 1) squeezed.push_back(d);
  const bool ok = squeezed == std::vector<int64_t>{tokens, kNumHeads} ||
                  (tokens == 1 && squeezed == std::vector<int64_t>{kNumHeads});
  if (!ok)
    fail(fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}] (natural log, one per query "
                     "and head; FlashMLA's [b, h, s_q] is that transposed)",
                     file.path().string(), name, t.shape_string(), tokens, kNumHeads));
  return widen(t, file.path().string(), name);
}

problem::Recipe recipe_from_options(
    const std::string& spelling, const std::vector<std::pair<std::string, std::string>>& fields) {
  problem::Recipe r = problem::parse_recipe(spelling);
  for (const auto& [field, value] : fields) problem::set_recipe_field(r, field, value);
  if (!fields.empty()) (void)problem::parse_recipe(problem::spell(r));  // consistency of the whole
  return r;
}

void add_recipe_field_options(CLI::App* sub,
                              std::vector<std::pair<std::string, std::string>>& fields) {
  for (const problem::RecipeField& f : problem::recipe_fields()) {
    const std::string field(f.name);
    sub->add_option_function<std::string>(
        "--" + field, [&fields, field](const std::string& v) { fields.emplace_back(field, v); },
        fmt::format("override the recipe's {} ({}): {}", field, f.values, f.what));
  }
}

}  // namespace mlacheck::cli
