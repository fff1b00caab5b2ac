// `mlacheck compare GOLDEN OUTPUT --recipe R [--tensor NAME] [--json FILE]`: judges a kernel's
// output, written anywhere (a Triton kernel under PyTorch saves it with `safetensors`), against a
// golden file, with the gate of check/ (total error vs out_exact, kernel error vs out_<recipe>)
// and the harness's own check beside it. Exit 0 pass, 1 fail, 2 usage or input error.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "check/data_scale.h"
#include "check/gate.h"
#include "check/layout.h"
#include "check/power.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "cli/commands.h"
#include "cli/json_report.h"
#include "io/golden.h"
#include "io/safetensors.h"
#include "problem/batch.h"
#include "problem/error.h"
#include "problem/recipe.h"
#include "problem/shape.h"
#include "quant/bf16.h"

namespace mlacheck::cli {
namespace {

using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;

constexpr int64_t kCacheRowsPerRead = 4096;  // kv is streamed: multi-GB caches never load whole

struct CompareOptions {
  std::string golden, output, recipe;
  std::string tensor = "out";
  bool tensor_given = false;
  std::optional<std::string> json;
  std::size_t worst = 10;
};

// An input error: main turns it into exit code 2 with the message.
[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

void expect_shape(const std::string& file, std::string_view name, const io::TensorInfo& info,
                  const std::vector<int64_t>& shape) {
  if (info.shape != shape)
    fail(fmt::format("{}: tensor '{}' has shape {}, expected {}", file, name,
                     io::shape_to_string(info.shape), io::shape_to_string(shape)));
}

std::vector<int32_t> read_i32(const io::SafetensorsReader& r, std::string_view name) {
  const io::Tensor t = io::read_checked(r, name, io::DType::I32, 1);
  const auto v = t.view<int32_t>();
  return {v.begin(), v.end()};
}

// IEEE binary16 -> float32, exact (the compiler's conversion; quant/ has no f16 codec, and output
// files from PyTorch may hold F16).
float f16_to_f32(uint16_t bits) { return static_cast<float>(__builtin_bit_cast(_Float16, bits)); }

// The golden file's batch and reference tensors.
struct Golden {
  std::map<std::string, std::string> metadata;
  std::unique_ptr<problem::Batch> batch;
  std::vector<float> exact;        // out_exact [T, 16, 512]
  std::vector<uint16_t> emulated;  // out_<recipe> [T, 16, 512] bf16 bits
  check::DataScale data;
};

Golden read_golden(const std::string& path, const problem::Recipe& recipe) {
  namespace gt = io::golden::tensor;
  namespace gm = io::golden::meta;
  const io::SafetensorsReader r(path);
  Golden g;
  g.metadata = r.metadata();
  const auto schema = g.metadata.find(std::string(gm::schema));
  if (schema != g.metadata.end() && schema->second != io::golden::kSchema)
    fail(fmt::format("{}: golden schema '{}', this mlacheck reads '{}'", path, schema->second,
                     io::golden::kSchema));

  int32_t page_size = 1;  // the harness's layout when the file does not say
  if (const auto p = g.metadata.find(std::string(gm::page_size)); p != g.metadata.end()) {
    const auto [end, ec] =
        std::from_chars(p->second.data(), p->second.data() + p->second.size(), page_size);
    if (ec != std::errc() || end != p->second.data() + p->second.size())
      fail(fmt::format("{}: __metadata__ page_size '{}' is not an integer", path, p->second));
  }
  const io::TensorInfo& kv_info = r.info(gt::kv);
  if (kv_info.dtype != io::DType::BF16 || kv_info.shape.size() != 3 || kv_info.shape[1] != 1 ||
      kv_info.shape[2] != kQkDim)
    fail(fmt::format("{}: tensor '{}' is {} {}, expected BF16 [N, 1, {}]", path, gt::kv,
                     io::dtype_name(kv_info.dtype), io::shape_to_string(kv_info.shape), kQkDim));
  const int64_t cache_rows = kv_info.shape[0];
  try {
    g.batch = std::make_unique<problem::Batch>(
        read_i32(r, gt::qo_indptr), read_i32(r, gt::kv_indptr),
        r.contains(gt::kv_indices) ? read_i32(r, gt::kv_indices) : std::vector<int32_t>{},
        page_size, cache_rows);
  } catch (const problem::ProblemError& e) {
    fail(fmt::format("{}: invalid batch layout: {}", path, e.what()));
  }
  const int64_t tokens = g.batch->total_q();
  const std::vector<int64_t> out_shape{tokens, kNumHeads, kVDim};

  const std::string emulated_name = io::golden::out_name(recipe.name);
  if (!r.contains(emulated_name)) {
    const auto recipes = g.metadata.find(std::string(gm::recipes));
    fail(fmt::format(
        "{}: no tensor '{}': the golden file has no emulated output of recipe {} "
        "(it has: {}); make one with `mlacheck ref`",
        path, emulated_name, recipe.name, recipes == g.metadata.end() ? "?" : recipes->second));
  }
  expect_shape(path, gt::out_exact, r.info(gt::out_exact), out_shape);
  expect_shape(path, emulated_name, r.info(emulated_name), out_shape);
  expect_shape(path, gt::q, r.info(gt::q), {tokens, kNumHeads, kQkDim});
  const io::Tensor exact = io::read_checked(r, gt::out_exact, io::DType::F32, 3);
  g.exact.assign(exact.view<float>().begin(), exact.view<float>().end());
  const io::Tensor emulated = io::read_checked(r, emulated_name, io::DType::BF16, 3);
  g.emulated.assign(emulated.view<uint16_t>().begin(), emulated.view<uint16_t>().end());

  check::DataScaleAccumulator acc(*g.batch);
  std::vector<uint16_t> rows;
  for (int64_t first = 0; first < cache_rows; first += kCacheRowsPerRead) {
    const int64_t count = std::min(kCacheRowsPerRead, cache_rows - first);
    rows.resize(static_cast<std::size_t>(count * kQkDim));
    r.read_rows(gt::kv, first, count, std::as_writable_bytes(std::span(rows)));
    acc.add_cache_rows(first, rows);
  }
  const io::Tensor q = io::read_checked(r, gt::q, io::DType::BF16, 3);
  g.data = acc.finish(q.view<uint16_t>());
  return g;
}

// The kernel's output as float: BF16, F16 or F32 of shape [T, 16, 512] (or [..., 16, 512] whose
// leading dims multiply to T, e.g. [B, 1, 16, 512]).
std::vector<float> read_output(const CompareOptions& o, int64_t tokens, std::string& used_name) {
  const io::SafetensorsReader r(o.output);
  used_name = o.tensor;
  if (!r.contains(o.tensor)) {
    const auto names = r.names();
    if (names.size() == 1 && !o.tensor_given) {
      used_name = names.front();
      fmt::print(stderr,
                 "mlacheck compare: note: {} has no tensor '{}'; using its only tensor '{}'\n",
                 o.output, o.tensor, used_name);
    } else {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      fail(fmt::format("{}: no tensor '{}' (it holds: {}); name the output with --tensor", o.output,
                       o.tensor, list.empty() ? "nothing" : list));
    }
  }
  const io::Tensor t = r.read(used_name);
  int64_t leading = 1;
  for (std::size_t i = 0; i + 2 < t.shape.size(); ++i) leading *= t.shape[i];
  const bool shape_ok = t.shape.size() >= 3 && t.shape[t.shape.size() - 2] == kNumHeads &&
                        t.shape.back() == kVDim && leading == tokens;
  if (!shape_ok)
    fail(fmt::format(
        "{}: tensor '{}' has shape {}, expected [{}, {}, {}] (the golden file's T = {})", o.output,
        used_name, t.shape_string(), tokens, kNumHeads, kVDim, tokens));
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
      fail(fmt::format("{}: tensor '{}' has dtype {}; compare reads BF16, F16 or F32", o.output,
                       used_name, io::dtype_name(t.dtype)));
  }
  return out;
}

// What the golden file says about itself (io/golden.h metadata keys), for the report's header.
std::string metadata_line(const std::map<std::string, std::string>& m) {
  std::string s;
  namespace gm = io::golden::meta;
  for (const std::string_view key : {gm::schema, gm::case_spec, gm::seed, gm::profile, gm::batch,
                                     gm::kv_len, gm::q_len, gm::page_size, gm::recipe_schedules}) {
    const auto it = m.find(std::string(key));
    if (it != m.end()) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", key, it->second);
  }
  return s.empty() ? "no metadata" : s;
}

int run_compare(const CompareOptions& o) {
  const auto recipe = problem::find_recipe(o.recipe);
  if (!recipe) {
    std::string known;
    for (const problem::Recipe& r : problem::recipes())
      known += (known.empty() ? "" : ", ") + std::string(r.name);
    fail(fmt::format("unknown --recipe '{}' (known: {})", o.recipe, known));
  }
  const Golden g = read_golden(o.golden, *recipe);
  std::string output_name;
  const std::vector<float> output = read_output(o, g.batch->total_q(), output_name);

  const check::Gate gate(*recipe, g.data, check::OutputLayout::from_batch(*g.batch), g.exact,
                         g.emulated);
  const check::GateReport report = gate.judge(output, o.worst);
  const std::vector<check::WrongAnswer> wrong{check::all_zeros(gate.layout())};
  const check::PowerReport power = check::score_power(gate, wrong);

  fmt::print("golden {} ({}), output {}:{}\n\n", o.golden, metadata_line(g.metadata), o.output,
             output_name);
  fmt::print("{}\n{}", check::format_gate(report), check::format_power(power));
  fmt::print("\nVERDICT: {}\n", report.pass() ? "PASS" : "FAIL");

  if (o.json) {
    const nlohmann::json j{{"golden", {{"path", o.golden}, {"metadata", g.metadata}}},
                           {"output", {{"path", o.output}, {"tensor", output_name}}},
                           {"verdict", report.pass() ? "pass" : "fail"},
                           {"gate", check::to_json(report)},
                           {"power", check::to_json(power)}};
    write_json_report(*o.json, j);
  }
  return report.pass() ? kExitOk : kExitFail;
}

}  // namespace

void add_compare_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Judge a kernel's output against a golden file: total error vs out_exact, kernel "
      "error vs out_<recipe>, and the harness's check beside them. Exit 0 pass, 1 fail, "
      "2 usage or input error");
  sub->add_option("GOLDEN", opts->golden, "golden safetensors file (mlacheck-golden/1)")
      ->required();
  sub->add_option("OUTPUT", opts->output,
                  "safetensors file with the kernel's output [T, 16, 512] "
                  "(BF16, F16 or F32)")
      ->required();
  sub->add_option("--recipe", opts->recipe, "the kernel's recipe (see `mlacheck list`)")
      ->required();
  sub->add_option("--tensor", opts->tensor,
                  "output tensor name (a file with one tensor may use any)")
      ->capture_default_str();
  sub->add_option("--json", opts->json, "also write the full report as JSON to this file");
  sub->add_option("--worst", opts->worst, "how many worst elements to list")->capture_default_str();
  sub->callback([&run, opts, sub] {
    opts->tensor_given = sub->count("--tensor") > 0;
    run = [opts] { return run_compare(*opts); };
  });
}

}  // namespace mlacheck::cli
