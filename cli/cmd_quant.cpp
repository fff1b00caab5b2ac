// `mlacheck quant --format FMT IN OUT`: quantize tensor `x` of a safetensors file exactly as the
// harness / aiter did, so kernel engineers (and outside checks) reach the codecs of quant/.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/quant_formats.h"
#include "cli/version.h"
#include "io/safetensors.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "quant/e8m0.h"
#include "quant/formats.h"
#include "quant/names.h"

namespace mlacheck::cli {
namespace {

struct QuantOptions {
  std::string format;
  std::string mxfp4_rounding = "rne";
  std::optional<std::string> fp8_overflow;
  std::string tensor = "x";
  bool raw_u8 = false;
  std::string in, out;
};

// The input as float32 (bf16 widens exactly) and, for BF16 inputs, its original bits.
struct Input {
  std::vector<int64_t> shape;
  std::vector<float> values;
  std::vector<uint16_t> bf16_bits;  // empty for F32 inputs
};

Input read_input(const QuantOptions& o) {
  const io::SafetensorsReader reader(o.in);
  const io::Tensor t = reader.read(o.tensor);
  Input in{t.shape, {}, {}};
  if (t.dtype == io::DType::BF16) {
    const auto bits = t.view<uint16_t>();
    in.bf16_bits.assign(bits.begin(), bits.end());
    in.values.resize(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) in.values[i] = quant::bf16_to_f32(bits[i]);
  } else if (t.dtype == io::DType::F32) {
    const auto v = t.view<float>();
    in.values.assign(v.begin(), v.end());
  } else {
    throw io::Error(fmt::format("{}: tensor '{}' has dtype {}; quant reads F32 or BF16", o.in,
                                o.tensor, io::dtype_name(t.dtype)));
  }
  return in;
}

template <class T>
io::Tensor make_tensor(io::DType dtype, std::vector<int64_t> shape, const std::vector<T>& v) {
  return io::Tensor::copy_of<T>(dtype, std::move(shape), std::span<const T>(v));
}

// fp8 e4m3fn and E8M0 have safetensors dtypes; --raw-u8 writes plain bytes for older readers.
io::DType code_dtype(io::DType typed, bool raw_u8) { return raw_u8 ? io::DType::U8 : typed; }

quant::Overflow overflow_of(const QuantOptions& o) {
  if (!o.fp8_overflow) return quant::Overflow::nan;  // NUMERICS Decisions: NaN, as torch 2.11
  const auto p = quant::parse_overflow(*o.fp8_overflow);
  if (!p) throw std::invalid_argument("--fp8-overflow must be 'nan' or 'saturate', got '" + *o.fp8_overflow + "'");
  return *p;
}

int run_quant(const QuantOptions& o) {
  require_distinct({{"OUT", o.out}}, {{"IN", o.in}});
  const auto format = find_quant_format(o.format);
  if (!format) throw std::invalid_argument("unknown --format '" + o.format + "' (see `mlacheck list`)");
  const bool plain_fp8 = format->id == QuantFormatId::e4m3fn || format->id == QuantFormatId::e4m3fnuz;
  if (o.fp8_overflow && !plain_fp8)
    throw std::invalid_argument("--fp8-overflow applies to the plain casts e4m3fn and e4m3fnuz only "
                                "(the harness clamps to the fp8 range before its cast)");
  const auto rounding = quant::parse_e2m1_rounding(o.mxfp4_rounding);
  if (!rounding)
    throw std::invalid_argument("--mxfp4-rounding must be 'rne' or 'ties-away', got '" + o.mxfp4_rounding + "'");

  Input in = read_input(o);
  const std::size_t n = in.values.size();
  io::SafetensorsWriter writer;
  writer.set_metadata("producer", std::string(version_string()));
  writer.set_metadata("format", o.format);
  writer.set_metadata("source", o.in + ":" + o.tensor);

  switch (format->id) {
    case QuantFormatId::bf16: {
      std::vector<uint16_t> y(n);
      for (std::size_t i = 0; i < n; ++i) y[i] = quant::f32_to_bf16(in.values[i]);
      writer.add("y", make_tensor(io::DType::BF16, in.shape, y));
      break;
    }
    case QuantFormatId::e4m3fn:
    case QuantFormatId::e4m3fnuz: {
      const bool fn = format->id == QuantFormatId::e4m3fn;
      const auto overflow = overflow_of(o);
      std::vector<uint8_t> y(n);
      quant::fp8_cast(in.values, fn ? quant::Fp8Format::e4m3fn : quant::Fp8Format::e4m3fnuz, overflow, y);
      // safetensors' F8_E4M3 is the OCP e4m3fn; e4m3fnuz has no dtype there, so its codes are U8.
      writer.add("y", make_tensor(fn ? code_dtype(io::DType::F8_E4M3, o.raw_u8) : io::DType::U8, in.shape, y));
      writer.set_metadata("fp8_overflow", std::string(quant::to_string(overflow)));
      break;
    }
    case QuantFormatId::e8m0: {
      std::vector<uint8_t> y(n);
      for (std::size_t i = 0; i < n; ++i) y[i] = quant::f32_to_e8m0(in.values[i]);
      writer.add("y", make_tensor(code_dtype(io::DType::F8_E8M0, o.raw_u8), in.shape, y));
      break;
    }
    case QuantFormatId::fp8_harness_e4m3fn:
    case QuantFormatId::fp8_harness_e4m3fnuz: {
      const bool fn = format->id == QuantFormatId::fp8_harness_e4m3fn;
      if (in.bf16_bits.empty()) {
        // The harness quantizes bf16 tensors; an F32 input is first rounded to bf16 (RNE).
        fmt::print(stderr, "mlacheck quant: note: {} is F32; rounding it to bf16 first, as the "
                           "harness quantizes bf16 tensors\n", o.tensor);
        in.bf16_bits.resize(n);
        for (std::size_t i = 0; i < n; ++i) in.bf16_bits[i] = quant::f32_to_bf16(in.values[i]);
      }
      std::vector<uint8_t> y(n);
      const float scale = quant::fp8_harness_quantize(
          in.bf16_bits, fn ? quant::Fp8Format::e4m3fn : quant::Fp8Format::e4m3fnuz, y);
      writer.add("y", make_tensor(fn ? code_dtype(io::DType::F8_E4M3, o.raw_u8) : io::DType::U8, in.shape, y));
      writer.add("scale", make_tensor(io::DType::F32, {1}, std::vector<float>{scale}));
      break;
    }
    case QuantFormatId::mxfp4: {
      if (in.shape.empty() || in.shape.back() % 32 != 0)
        throw io::Error(fmt::format("{}: tensor '{}': mxfp4 needs a last dimension that is a multiple "
                                    "of 32 (blocks of 32), got shape rank {} last dim {}", o.in, o.tensor,
                                    in.shape.size(), in.shape.empty() ? 0 : in.shape.back()));
      const auto row_len = static_cast<std::size_t>(in.shape.back());
      std::vector<uint8_t> packed(n / 2), scales(n / 32);
      quant::mxfp4_quantize(in.values, row_len, *rounding, packed, scales);
      std::vector<int64_t> packed_shape = in.shape, scale_shape = in.shape;
      packed_shape.back() /= 2;
      scale_shape.back() /= 32;
      writer.add("y", make_tensor(io::DType::U8, packed_shape, packed));
      writer.add("scale", make_tensor(code_dtype(io::DType::F8_E8M0, o.raw_u8), scale_shape, scales));
      writer.set_metadata("mxfp4_rounding", o.mxfp4_rounding);
      break;
    }
  }
  writer.write(o.out);
  return kExitOk;
}

}  // namespace

void add_quant_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<QuantOptions>();
  CLI::App* sub = app.add_subcommand(
      "quant", "Quantize tensor x of a safetensors file (F32 or BF16) exactly as the harness/aiter did; "
               "writes y (codes) and, where the format has one, scale");
  sub->add_option("--format", opts->format, "bf16, e4m3fn, e4m3fnuz, e8m0, fp8-harness-e4m3fn, "
                                            "fp8-harness-e4m3fnuz or mxfp4 (see `mlacheck list`)")
      ->required();
  sub->add_option("--mxfp4-rounding", opts->mxfp4_rounding,
                  "E2M1 element rounding: rne (aiter >= 2026-03-17) or ties-away (aiter 2025-10-28)")
      ->capture_default_str();
  sub->add_option("--fp8-overflow", opts->fp8_overflow,
                  "e4m3fn/e4m3fnuz casts: nan (torch 2.11, default) or saturate (hardware cvt)");
  sub->add_option("--tensor", opts->tensor, "name of the input tensor")->capture_default_str();
  sub->add_flag("--raw-u8", opts->raw_u8, "write fp8 e4m3fn and E8M0 codes as U8 instead of F8_E4M3/F8_E8M0");
  sub->add_option("IN", opts->in, "input safetensors file")->required();
  sub->add_option("OUT", opts->out, "output safetensors file")->required();
  sub->callback([&run, opts] { run = [opts] { return run_quant(*opts); }; });
}

}  // namespace mlacheck::cli
