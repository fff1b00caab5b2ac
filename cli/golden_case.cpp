#include "cli/golden_case.h"

#include <charconv>
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include <fmt/core.h>

#include "cli/progress_printer.h"
#include "cli/version.h"
#include "io/golden.h"
#include "problem/error.h"
#include "problem/kv_cache.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/bulk.h"
#include "quant/fp8.h"
#include "quant/names.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"

namespace mlacheck::cli {
namespace {

namespace gt = io::golden::tensor;
namespace gm = io::golden::meta;
using problem::kNumHeads;
using problem::kQkDim;
using problem::kVDim;

// The golden file's caches are the harness's: e4m3fn and the default (RNE) MXFP4 rounding.
constexpr quant::Fp8Format kGoldenFp8 = quant::Fp8Format::e4m3fn;
constexpr quant::E2M1Rounding kGoldenMxfp4 = quant::E2M1Rounding::rne;

// Throws the reader's own message unless the tensor is there with this dtype and shape.
void check_tensor(const io::SafetensorsReader& f, std::string_view name, io::DType dtype,
                  const std::vector<int64_t>& shape) {
  if (!f.contains(name) || f.info(name).dtype != dtype || f.info(name).shape.size() != shape.size())
    (void)io::read_checked(f, name, dtype, shape.size());  // throws the reader's own message
  const io::TensorInfo& info = f.info(name);
  if (info.shape != shape)
    throw io::Error(fmt::format("{}: tensor '{}' has shape {}, expected {}", f.path().string(), name,
                                io::shape_to_string(info.shape), io::shape_to_string(shape)));
}

// Read straight into the vector (read_rows), not through an io::Tensor: a second copy doubles the
// peak and the page faults.
template <class T>
std::vector<T> read_vector(const io::SafetensorsReader& f, std::string_view name, io::DType dtype,
                           const std::vector<int64_t>& shape) {
  check_tensor(f, name, dtype, shape);
  std::size_t n = 1;
  for (int64_t d : shape) n *= static_cast<std::size_t>(d);
  std::vector<T> out(n);
  if (!shape.empty() && shape[0] > 0) f.read_rows(name, 0, shape[0], std::as_writable_bytes(std::span(out)));
  return out;
}

// The cache tensors (GBs) mapped from the file, not read: a vector would be zero-filled a page
// fault at a time and then overwritten by the read, most of the cost of reading one (compare at
// 256 x 8192 keys). Read into a vector only where the file puts the tensor at an offset that is
// not a multiple of its element size (allowed by the format, not by a typed view).
template <class T>
io::SharedArray<T> map_array(const io::SafetensorsReader& f, std::string_view name, io::DType dtype,
                             const std::vector<int64_t>& shape) {
  check_tensor(f, name, dtype, shape);
  io::SafetensorsReader::Mapped m = f.map(name);
  if (reinterpret_cast<std::uintptr_t>(m.bytes.data()) % alignof(T) != 0)
    return read_vector<T>(f, name, dtype, shape);
  const std::span<const T> values(reinterpret_cast<const T*>(m.bytes.data()), m.bytes.size() / sizeof(T));
  return io::SharedArray<T>(values, std::move(m.owner));
}

std::vector<int32_t> read_indptr(const io::SafetensorsReader& f, std::string_view name) {
  const io::Tensor t = io::read_checked(f, name, io::DType::I32, 1);
  const auto v = t.view<int32_t>();
  return {v.begin(), v.end()};
}

template <int width, class T, class Bad>
std::optional<CachePosition> first_bad_read_element(const problem::Batch& b, std::span<const T> cache,
                                                    Bad bad) {
  const int64_t n = b.num_requests();
  std::vector<std::optional<CachePosition>> found(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t r = 0; r < n; ++r)
    for (int64_t t = 0; t < b.kv_len(r) && !found[static_cast<std::size_t>(r)]; ++t) {
      const int64_t row = b.kv_row(r, t);
      const T* x = cache.data() + row * width;
      int count = 0;  // a count without an early exit, which the compiler vectorizes
      for (int d = 0; d < width; ++d) count += bad(x[d]) ? 1 : 0;
      if (count > 0)
        for (int d = 0; d < width; ++d)
          if (bad(x[d])) {
            found[static_cast<std::size_t>(r)] = CachePosition{r, t, row, d};
            break;
          }
    }
  for (const auto& f : found)
    if (f) return f;
  return std::nullopt;
}

// NaN/Inf in the data a decode reads makes every downstream number meaningless: refuse it with
// the first position. Unread cache rows may hold NaN on purpose (poisoning for kernel tests).
void check_finite(const GoldenCase& c, const std::string& file) {
  for (std::size_t i = 0; i < c.q.size(); ++i)
    if (!quant::bf16_is_finite(c.q[i]))
      throw io::Error(fmt::format("{}: tensor 'q' holds NaN/Inf at [{}, {}, {}] (bits 0x{:04X})", file,
                                  i / (kNumHeads * kQkDim), i / kQkDim % kNumHeads, i % kQkDim, c.q[i]));
  if (const auto p = first_nonfinite_kv(c.batch, c.kv)) {
    const uint16_t v = c.kv[static_cast<std::size_t>(p->row * kQkDim + p->element)];
    throw io::Error(fmt::format("{}: tensor 'kv' holds NaN/Inf at [{}, 0, {}] (bits 0x{:04X}), "
                                "key {} of request {}", file, p->row, p->element, v, p->key, p->request));
  }
}

std::vector<bool> rows_read(const problem::Batch& b) {
  std::vector<bool> read(static_cast<std::size_t>(b.cache_rows()), false);
  for (int64_t r = 0; r < b.num_requests(); ++r)
    for (int64_t t = 0; t < b.kv_len(r); ++t) read[static_cast<std::size_t>(b.kv_row(r, t))] = true;
  return read;
}

// A golden file is never written with references that are not finite where a query sees keys
// (issue 11, item 1): whatever made them so (an input's own NaN codes in a row that is read, say)
// is an error that names the tensor and the place.
void check_references_finite(const GoldenCase& c) {
  const auto check = [&](const std::string& name, std::span<const float> v) {
    for (int64_t t = 0; t < c.batch.total_q(); ++t) {
      int64_t b = 0;
      while (c.batch.qo_indptr()[b + 1] <= t) ++b;
      if (c.batch.visible_kv(b, t - c.batch.qo_indptr()[b]) == 0) continue;
      for (int64_t i = t * kNumHeads * kVDim; i < (t + 1) * kNumHeads * kVDim; ++i)
        if (!std::isfinite(v[static_cast<std::size_t>(i)]))
          throw io::Error(fmt::format(
              "the reference '{}' is {} at [{}, {}, {}], a query that sees keys: its inputs or "
              "caches are not finite where they are read; no golden file written",
              name, v[static_cast<std::size_t>(i)], t, i / kVDim % kNumHeads, i % kVDim));
    }
  };
  if (c.exact) check(std::string(gt::out_exact), c.exact->out);
  for (const auto& [name, r] : c.emulated) {
    check(io::golden::out_name(name), widen_bf16(r.out));
  }
}

template <class T>
void add_view(io::SafetensorsWriter& w, std::string_view name, io::DType dtype, std::vector<int64_t> shape,
              std::span<const T> values) {
  w.add_view(std::string(name), dtype, std::move(shape), std::as_bytes(values));
}

}  // namespace

std::optional<CachePosition> first_nonfinite_kv(const problem::Batch& b, std::span<const uint16_t> kv) {
  return first_bad_read_element<kQkDim>(b, kv, [](uint16_t v) { return !quant::bf16_is_finite(v); });
}
std::optional<CachePosition> first_fp8_nan(const problem::Batch& b, std::span<const uint8_t> codes) {
  const uint8_t nan = quant::detail::fp8_nan_code(kGoldenFp8);  // 0x7F, 0xFF with the sign
  return first_bad_read_element<kQkDim>(b, codes, [nan](uint8_t c) { return (c & 0x7F) == nan; });
}
std::optional<CachePosition> first_e8m0_nan(const problem::Batch& b, std::span<const uint8_t> scales) {
  return first_bad_read_element<problem::kMxfp4RowScales>(b, scales, [](uint8_t e) { return e == 0xFF; });
}

GoldenCase generate_case(const ref::CaseSpec& spec) {
  ProgressPrinter progress("generate " + (spec.name.empty() ? ref::default_name(spec) : spec.name));
  ref::Inputs in = ref::generate(spec, &progress);
  GoldenCase c{std::move(in.batch), std::move(in.q), std::move(in.kv), {}, {}, {}, {}, {}};
  c.metadata[std::string(gm::case_spec)] = case_line(spec);
  c.metadata[std::string(gm::seed)] = std::to_string(spec.seed);
  c.metadata[std::string(gm::profile)] = std::string(ref::to_string(spec.profile));
  c.metadata[std::string(gm::batch)] = std::to_string(spec.batch);
  c.metadata[std::string(gm::kv_len)] = std::to_string(spec.kv_len);
  c.metadata[std::string(gm::q_len)] = std::to_string(spec.q_len);
  return c;
}

CaseSize case_size(const io::SafetensorsReader& f) {
  const auto extent = [&](std::string_view name, std::size_t dim) -> int64_t {
    if (!f.contains(name)) return 0;
    const auto& shape = f.info(name).shape;
    return dim < shape.size() ? shape[dim] : 0;
  };
  return {extent(gt::q, 0), extent(gt::kv, 0), std::max<int64_t>(0, extent(gt::qo_indptr, 0) - 1),
          extent(gt::kv_indices, 0)};
}

HeldCaches caches_in(const io::SafetensorsReader& f) {
  return {f.contains(gt::kv_fp8), f.contains(gt::kv_mxfp4)};
}

CaseSize case_size(const ref::CaseSpec& s) {
  const int64_t batch = std::max(s.batch, 0), len = std::max(s.kv_len, 0), page = std::max(s.page_size, 1);
  const int64_t pages_per_request = (len + page - 1) / page;
  const bool paged = s.page_size != 1 || s.shuffle_pages;
  return {batch * std::clamp(s.q_len, 1, problem::kMaxQSeqLen), paged ? batch * pages_per_request * page : batch * len,
          batch, paged ? batch * pages_per_request : 0};
}

GoldenCase read_case(const io::SafetensorsReader& f, CachesToRead caches) {
  const std::string file = f.path().string();
  std::vector<int32_t> qo = read_indptr(f, gt::qo_indptr), kvp = read_indptr(f, gt::kv_indptr);
  std::vector<int32_t> indices;
  if (f.contains(gt::kv_indices)) indices = read_indptr(f, gt::kv_indices);
  int32_t page_size = 1;
  if (auto it = f.metadata().find(std::string(gm::page_size)); it != f.metadata().end()) {
    // Exactly the digits of a positive int32 (std::stoi took "16.5", "16abc", " 16" and "+16").
    const std::string& text = it->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), page_size);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || page_size < 1)
      throw io::Error(fmt::format("{}: __metadata__ page_size '{}' is not an integer >= 1", file, text));
  }
  const io::TensorInfo& kv_info = f.info(gt::kv);
  if (kv_info.dtype != io::DType::BF16 || kv_info.shape.size() != 3 || kv_info.shape[1] != 1 ||
      kv_info.shape[2] != kQkDim)
    throw io::Error(fmt::format("{}: tensor 'kv' is {} {}, expected BF16 [N, 1, {}]", file,
                                io::dtype_name(kv_info.dtype), io::shape_to_string(kv_info.shape), kQkDim));
  const int64_t rows = kv_info.shape[0];
  problem::Batch batch = [&] {
    try {
      return problem::Batch(std::move(qo), std::move(kvp), std::move(indices), page_size, rows);
    } catch (const problem::ProblemError& e) {
      throw problem::ProblemError(fmt::format("{}: {}", file, e.what()));
    }
  }();
  const int64_t total_q = batch.total_q();
  GoldenCase c{std::move(batch), read_vector<uint16_t>(f, gt::q, io::DType::BF16, {total_q, kNumHeads, kQkDim}),
               map_array<uint16_t>(f, gt::kv, io::DType::BF16, {rows, 1, kQkDim}), f.metadata(), {}, {}, {}, {}};
  c.metadata.erase(std::string(gm::schema));
  c.metadata.erase(std::string(gm::generator));
  c.metadata.erase(std::string(gm::recipes));
  check_finite(c, file);

  // Caches the file already has are used as they are (a kernel engineer's own quantization).
  if (caches.fp8 && f.contains(gt::kv_fp8)) {
    Fp8CacheData d;
    d.codes = map_array<uint8_t>(f, gt::kv_fp8, io::DType::F8_E4M3, {rows, 1, kQkDim});
    d.scale = read_vector<float>(f, gt::kv_fp8_scale, io::DType::F32, {1})[0];
    if (!std::isfinite(d.scale) || d.scale <= 0)
      throw io::Error(fmt::format("{}: tensor 'kv_fp8_scale' is {}, must be finite and > 0", file, d.scale));
    c.fp8 = std::move(d);
  }
  if (caches.mxfp4 && f.contains(gt::kv_mxfp4)) {
    Mxfp4CacheData d;
    d.packed = map_array<uint8_t>(f, gt::kv_mxfp4, io::DType::U8, {rows, 1, problem::kMxfp4RowBytes});
    d.scales = map_array<uint8_t>(f, gt::kv_mxfp4_scale, io::DType::F8_E8M0, {rows, 1, problem::kMxfp4RowScales});
    c.mxfp4 = std::move(d);
  }
  return c;
}

void complete(GoldenCase& c, std::span<const problem::Recipe> recipes) {
  if (!c.fp8) {
    // The per-tensor scale is taken over the rows the batch reads (the harness's whole tensor
    // whenever every row is read, as in its layout): rows no request reads may hold anything, NaN
    // included (the GPU tests poison them), and must not decide the scale. They are quantized as
    // zeros.
    Fp8CacheData d;
    d.derived = true;
    d.scale = quant::fp8_harness_scale_rows(c.kv, kQkDim, rows_read(c.batch), kGoldenFp8);
    c.fp8 = std::move(d);
  }
  if (!c.mxfp4) {
    Mxfp4CacheData d;
    d.derived = true;
    c.mxfp4 = std::move(d);
  }
  if (!c.exact) {
    ProgressPrinter progress("exact decode");
    c.exact = ref::decode_exact(c.batch, c.q, c.kv, &progress);
  }
  for (const problem::Recipe& r : recipes) {
    ProgressPrinter progress(fmt::format("emulated {}", r.name));
    std::erase_if(c.emulated, [&](const auto& e) { return e.first == r.name; });
    c.emulated.emplace_back(std::string(r.name), ref::decode_emulated(c.batch, c.q, golden_cache(c, r), r,
                                                                      r.num_splits, &progress));
  }
  check_references_finite(c);
}

std::span<const uint16_t> emulated_output(const GoldenCase& c, const problem::Recipe& recipe) {
  return emulated_result(c, recipe).out;
}

const ref::EmulatedResult& emulated_result(const GoldenCase& c, const problem::Recipe& recipe) {
  const auto it = std::find_if(c.emulated.begin(), c.emulated.end(),
                               [&](const auto& e) { return e.first == recipe.name; });
  if (it == c.emulated.end())
    throw std::logic_error(fmt::format("no emulated output of recipe {} in the case", recipe.name));
  return it->second;
}

std::vector<float> widen_bf16(std::span<const uint16_t> bf16) {
  std::vector<float> out(bf16.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = quant::bf16_to_f32(bf16[i]);
  return out;
}

problem::KvCache golden_cache(const GoldenCase& c, const problem::Recipe& r) {
  const int64_t rows = c.batch.cache_rows();
  if ((r.kv == problem::KvFormat::fp8 && r.fp8 != kGoldenFp8) ||
      (r.kv == problem::KvFormat::mxfp4 && r.mxfp4_rounding != kGoldenMxfp4))
    return ref::on_read_cache(c.kv, rows, r);
  problem::KvCache k;
  k.format = r.kv;
  k.rows = rows;
  k.bf16 = c.kv;
  if (c.fp8) {
    k.fp8 = c.fp8->codes;
    k.fp8_scale = c.fp8->scale;
  }
  k.fp8_format = r.fp8;
  if (c.mxfp4) {
    k.mxfp4 = c.mxfp4->packed;
    k.mxfp4_scale = c.mxfp4->scales;
  }
  if ((r.kv == problem::KvFormat::fp8 && c.fp8 && c.fp8->derived) ||
      (r.kv == problem::KvFormat::mxfp4 && c.mxfp4 && c.mxfp4->derived))
    k.on_read = problem::KvCache::QuantizeOnRead{c.fp8 ? c.fp8->scale : 1.0f, kGoldenMxfp4};
  return k;
}

Mxfp4CacheData stored_mxfp4(const GoldenCase& c) {
  if (!c.mxfp4) throw std::logic_error("stored_mxfp4: the case has no MXFP4 cache (complete() first)");
  if (!c.mxfp4->derived) return *c.mxfp4;
  const auto rows = static_cast<std::size_t>(c.batch.cache_rows());
  std::vector<uint8_t> packed(rows * problem::kMxfp4RowBytes), scales(rows * problem::kMxfp4RowScales);
  ref::quantize_mxfp4_rows(c.kv, kGoldenMxfp4, packed, scales);
  Mxfp4CacheData d;
  d.packed = std::move(packed);
  d.scales = std::move(scales);
  return d;
}

std::vector<CacheTensor> cache_tensors(const GoldenCase& c) {
  using io::DType;
  const int64_t n = c.batch.cache_rows();
  const std::span<const uint16_t> kv = c.kv;
  const auto bytes = [](std::span<std::byte> out) {
    return std::span(reinterpret_cast<uint8_t*>(out.data()), out.size());
  };
  // A held tensor's rows, copied a chunk at a time.
  const auto copy = [](std::span<const uint8_t> held, std::size_t row_bytes) -> io::RowProducer {
    return [held, row_bytes](int64_t first, int64_t, std::span<std::byte> out) {
      const auto from = held.subspan(static_cast<std::size_t>(first) * row_bytes, out.size());
      std::copy(from.begin(), from.end(), reinterpret_cast<uint8_t*>(out.data()));
    };
  };
  const auto rows_of = [kv](int64_t first, int64_t count) {  // copied into producers: no references
    return kv.subspan(static_cast<std::size_t>(first) * kQkDim, static_cast<std::size_t>(count) * kQkDim);
  };
  std::vector<CacheTensor> tensors;
  if (c.fp8) {
    io::RowProducer rows = copy(c.fp8->codes, kQkDim);
    if (c.fp8->derived) {
      // fp8_harness_quantize_rows' codes: each read element's by table, +0's for a row not read.
      auto table =
          std::make_shared<const std::vector<uint8_t>>(quant::fp8_harness_code_table(c.fp8->scale, kGoldenFp8));
      auto read = std::make_shared<const std::vector<bool>>(rows_read(c.batch));
      rows = [kv, table, read](int64_t first, int64_t count, std::span<std::byte> out) {
        const uint8_t* t = table->data();
#pragma omp parallel for schedule(static)
        for (int64_t r = first; r < first + count; ++r) {
          const uint16_t* src = kv.data() + r * kQkDim;
          auto* dst = reinterpret_cast<uint8_t*>(out.data()) + (r - first) * kQkDim;
          if ((*read)[static_cast<std::size_t>(r)])
            for (int d = 0; d < kQkDim; ++d) dst[d] = t[src[d]];
          else
            std::fill(dst, dst + kQkDim, t[0]);
        }
      };
    }
    tensors.push_back({std::string(gt::kv_fp8), DType::F8_E4M3, {n, 1, kQkDim}, kQkDim, std::move(rows)});
  }
  if (c.mxfp4) {
    io::RowProducer packed = copy(c.mxfp4->packed, problem::kMxfp4RowBytes);
    io::RowProducer scales = copy(c.mxfp4->scales, problem::kMxfp4RowScales);
    if (c.mxfp4->derived) {
      packed = [rows_of, bytes](int64_t first, int64_t count, std::span<std::byte> out) {
        std::vector<uint8_t> unused(static_cast<std::size_t>(count) * problem::kMxfp4RowScales);
        ref::quantize_mxfp4_rows(rows_of(first, count), kGoldenMxfp4, bytes(out), unused);
      };
      scales = [rows_of, bytes](int64_t first, int64_t count, std::span<std::byte> out) {
        ref::mxfp4_scale_rows(rows_of(first, count), bytes(out));
      };
    }
    tensors.push_back({std::string(gt::kv_mxfp4), DType::U8, {n, 1, problem::kMxfp4RowBytes}, problem::kMxfp4RowBytes,
                       std::move(packed)});
    tensors.push_back({std::string(gt::kv_mxfp4_scale), DType::F8_E8M0, {n, 1, problem::kMxfp4RowScales},
                       problem::kMxfp4RowScales, std::move(scales)});
  }
  return tensors;
}

void write_case(const GoldenCase& c, const std::filesystem::path& out) {
  using io::DType;
  const problem::Batch& b = c.batch;
  const int64_t t = b.total_q(), n = b.cache_rows();
  io::SafetensorsWriter w;
  for (const auto& [k, v] : c.metadata) w.set_metadata(k, v);
  w.set_metadata(std::string(gm::schema), std::string(io::golden::kSchema));
  w.set_metadata(std::string(gm::generator), std::string(version_string()));
  w.set_metadata(std::string(gm::page_size), std::to_string(b.page_size()));

  add_view<uint16_t>(w, gt::q, DType::BF16, {t, kNumHeads, kQkDim}, c.q);
  add_view<uint16_t>(w, gt::kv, DType::BF16, {n, 1, kQkDim}, c.kv);
  add_view<int32_t>(w, gt::qo_indptr, DType::I32, {b.num_requests() + 1}, b.qo_indptr());
  add_view<int32_t>(w, gt::kv_indptr, DType::I32, {b.num_requests() + 1}, b.kv_indptr());
  if (b.paged())
    add_view<int32_t>(w, gt::kv_indices, DType::I32, {static_cast<int64_t>(b.kv_indices().size())},
                      b.kv_indices());
  // The caches in the order they always had (the layout is by element size, then this order).
  for (CacheTensor& ct : cache_tensors(c)) {
    const bool fp8 = ct.name == gt::kv_fp8;
    w.add_generated(std::move(ct.name), ct.dtype, std::move(ct.shape), std::move(ct.rows));
    if (fp8) {
      add_view<float>(w, gt::kv_fp8_scale, DType::F32, {1}, std::span(&c.fp8->scale, 1));
      w.set_metadata(std::string(gm::fp8_format), quant::to_string(kGoldenFp8));
    }
  }
  if (c.mxfp4) w.set_metadata(std::string(gm::mxfp4_rounding), quant::to_string(kGoldenMxfp4));
  if (c.exact) {
    add_view<float>(w, gt::out_exact, DType::F32, {t, kNumHeads, kVDim}, c.exact->out);
    add_view<float>(w, gt::lse_exact, DType::F32, {t, kNumHeads}, c.exact->lse);
  }
  std::string names, schedules;
  for (const auto& [name, r] : c.emulated) {
    add_view<uint16_t>(w, io::golden::out_name(name), DType::BF16, {t, kNumHeads, kVDim}, r.out);
    add_view<float>(w, io::golden::lse_name(name), DType::F32, {t, kNumHeads}, r.lse);
    names += (names.empty() ? "" : ",") + name;
    const problem::Recipe recipe = *problem::find_recipe(name);
    schedules += fmt::format("{}{}:{}:{}", schedules.empty() ? "" : ",", name, recipe.num_splits, recipe.softmax_tile);
  }
  w.set_metadata(std::string(gm::recipes), names);
  w.set_metadata(std::string(gm::recipe_schedules), schedules);
  w.write(out);
}

std::string case_line(const ref::CaseSpec& s) {
  std::string line = fmt::format("name={} batch={} kv_len={} seed={}", s.name.empty() ? ref::default_name(s) : s.name,
                                 s.batch, s.kv_len, s.seed);
  if (s.q_len != 1) line += fmt::format(" q_len={}", s.q_len);
  if (s.profile != ref::Profile::harness) line += fmt::format(" profile={}", ref::to_string(s.profile));
  if (s.ragged) line += " layout=ragged";
  if (s.page_size != 1) line += fmt::format(" page_size={}", s.page_size);
  if (s.shuffle_pages) line += " shuffle_pages=1";
  if (s.poison_unused) line += " poison_unused=1";
  return line;
}

std::vector<problem::Recipe> parse_recipes(const std::string& list) {
  std::vector<problem::Recipe> out;
  if (list.empty() || list == "all") {
    for (const problem::Recipe& r : problem::recipes()) out.push_back(r);
    return out;
  }
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, end - start);
    const auto r = problem::find_recipe(name);
    if (!r) {
      std::string known;
      for (const problem::Recipe& k : problem::recipes()) known += (known.empty() ? "" : ", ") + std::string(k.name);
      throw std::invalid_argument(fmt::format("unknown recipe '{}' (known: {})", name, known));
    }
    out.push_back(*r);
    start = end + 1;
  }
  return out;
}

}  // namespace mlacheck::cli
