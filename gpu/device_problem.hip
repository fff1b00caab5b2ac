#include "gpu/device_problem.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpu/availability.h"
#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "problem/shape.h"
#include "quant/fp8.h"

namespace mlacheck::gpu {
namespace {

constexpr unsigned char kPoisonByte = 0xFF;  // bf16 0xFFFF, float 0xFFFFFFFF: NaN; fp8 e4m3fn NaN
constexpr unsigned char kFnuzNaN = 0x80;     // the only NaN of fp8 e4m3fnuz
constexpr int kPoisonThreads = 256;

// Fills every byte of the rows whose `used` flag is 0 with `byte` (one thread per row: unused rows
// are few). data: rows x row_bytes bytes.
__global__ void __launch_bounds__(kPoisonThreads)
    poison_rows_kernel(unsigned char* data, int64_t row_bytes, int64_t rows,
                       const unsigned char* used, unsigned char byte) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += stride)
    if (used[r] == 0)
      for (int64_t j = 0; j < row_bytes; ++j) data[r * row_bytes + j] = byte;
}

struct DeviceCache {
  const void* key = nullptr;  // host data the copy was made from
  problem::KvFormat format = problem::KvFormat::bf16;
  float fp8_scale = 1.0f;
  DeviceBuffer<unsigned char> data{0};    // [N + pad, row bytes]
  DeviceBuffer<unsigned char> scales{0};  // MXFP4 E8M0 [N + pad, 18]
};

const void* key_of(const problem::KvCache& c) {
  switch (c.format) {
    case problem::KvFormat::bf16: return c.bf16.data();
    case problem::KvFormat::fp8: return c.fp8.data();
    case problem::KvFormat::mxfp4: return c.mxfp4.data();
  }
  return nullptr;
}

}  // namespace

struct DeviceProblem::Impl {
  const problem::Batch& batch;
  hipStream_t stream = nullptr;
  DeviceBuffer<int32_t> qo_indptr{0}, kv_indptr{0}, kv_indices{0};
  DeviceBuffer<int64_t> page_indptr{0};
  DeviceBuffer<uint16_t> q{0};
  DeviceBuffer<unsigned char> used{0};  // [N + pad]: 1 for rows some request reads
  DeviceBuffer<uint16_t> out{0};
  DeviceBuffer<float> lse{0};
  DeviceBuffer<unsigned char> workspace{0};
  std::vector<std::unique_ptr<DeviceCache>> caches;

  explicit Impl(const problem::Batch& b) : batch(b) {}

  void poison(DeviceBuffer<unsigned char>& buf, int64_t row_bytes, unsigned char byte) {
    const int64_t rows = batch.cache_rows() + kPadRows;
    const auto blocks = static_cast<unsigned>(
        std::clamp<int64_t>((rows + kPoisonThreads - 1) / kPoisonThreads, 1, 4096));
    poison_rows_kernel<<<blocks, kPoisonThreads, 0, stream>>>(buf.get(), row_bytes, rows,
                                                              used.get(), byte);
    MLACHECK_GPU_CHECK(hipGetLastError());
    MLACHECK_GPU_CHECK(hipStreamSynchronize(stream));
  }

  // Copies `bytes` of host data into the front of a buffer sized for the padded cache.
  static DeviceBuffer<unsigned char> upload(const void* host, std::size_t bytes,
                                            std::size_t padded_bytes) {
    DeviceBuffer<unsigned char> buf(padded_bytes);
    if (bytes > 0)
      MLACHECK_GPU_CHECK(hipMemcpy(buf.get(), host, bytes, hipMemcpyHostToDevice));
    return buf;
  }

  const DeviceCache& cache(const problem::KvCache& host) {
    const void* key = key_of(host);
    for (const auto& c : caches)
      if (c->key == key && c->format == host.format) return *c;
    if (host.rows != batch.cache_rows())
      throw std::invalid_argument("DeviceProblem: the cache has " + std::to_string(host.rows) +
                                  " rows, the batch layout " +
                                  std::to_string(batch.cache_rows()));
    auto c = std::make_unique<DeviceCache>();
    c->key = key;
    c->format = host.format;
    const auto rows = static_cast<std::size_t>(batch.cache_rows());
    const auto padded = rows + static_cast<std::size_t>(kPadRows);
    switch (host.format) {
      case problem::KvFormat::bf16: {
        const std::size_t row = problem::kQkDim * sizeof(uint16_t);
        c->data = upload(host.bf16.data(), rows * row, padded * row);
        poison(c->data, static_cast<int64_t>(row), kPoisonByte);
        break;
      }
      case problem::KvFormat::fp8: {
        const std::size_t row = problem::kQkDim;
        c->data = upload(host.fp8.data(), rows * row, padded * row);
        c->fp8_scale = host.fp8_scale;
        poison(c->data, static_cast<int64_t>(row),
               host.fp8_format == quant::Fp8Format::e4m3fnuz ? kFnuzNaN : kPoisonByte);
        break;
      }
      case problem::KvFormat::mxfp4: {
        const std::size_t row = problem::kMxfp4RowBytes, srow = problem::kMxfp4RowScales;
        c->data = upload(host.mxfp4.data(), rows * row, padded * row);
        c->scales = upload(host.mxfp4_scale.data(), rows * srow, padded * srow);
        poison(c->data, static_cast<int64_t>(row), kPoisonByte);
        poison(c->scales, static_cast<int64_t>(srow), kPoisonByte);  // E8M0 0xFF is NaN
        break;
      }
    }
    caches.push_back(std::move(c));
    return *caches.back();
  }
};

DeviceProblem::DeviceProblem(const problem::Batch& batch, std::span<const uint16_t> q_bf16)
    : impl_(std::make_unique<Impl>(batch)) {
  Impl& m = *impl_;
  const auto tokens = static_cast<std::size_t>(batch.total_q());
  const std::size_t q_row = static_cast<std::size_t>(problem::kNumHeads) * problem::kQkDim;
  if (q_bf16.size() != tokens * q_row)
    throw std::invalid_argument("DeviceProblem: q has " + std::to_string(q_bf16.size()) +
                                " values, the batch needs " + std::to_string(tokens * q_row));
  MLACHECK_GPU_CHECK(hipStreamCreate(&m.stream));

  const auto copy = [](auto& buf, const auto& host) {
    using T = std::remove_cvref_t<decltype(*host.data())>;
    buf = DeviceBuffer<T>(std::vector<T>(host.begin(), host.end()));
  };
  copy(m.qo_indptr, batch.qo_indptr());
  copy(m.kv_indptr, batch.kv_indptr());
  if (batch.paged()) {
    std::vector<int32_t> indices(batch.kv_indices().begin(), batch.kv_indices().end());
    indices.resize(indices.size() + kPadSlots, INT32_MAX);  // a read past the table: far away
    m.kv_indices = DeviceBuffer<int32_t>(indices);
    copy(m.page_indptr, batch.page_indptr());
  }
  std::vector<uint16_t> q(q_bf16.begin(), q_bf16.end());
  q.resize(q.size() + q_row, 0xFFFF);  // one NaN row past the end
  m.q = DeviceBuffer<uint16_t>(q);

  std::vector<unsigned char> used(static_cast<std::size_t>(batch.cache_rows() + kPadRows), 0);
  for (int64_t b = 0; b < batch.num_requests(); ++b)
    for (int64_t t = 0; t < batch.kv_len(b); ++t) used[batch.kv_row(b, t)] = 1;
  m.used = DeviceBuffer<unsigned char>(used);
  m.out = DeviceBuffer<uint16_t>(tokens * problem::kNumHeads * problem::kVDim);
  m.lse = DeviceBuffer<float>(tokens * problem::kNumHeads);
}

DeviceProblem::~DeviceProblem() {
  if (impl_ && impl_->stream != nullptr) static_cast<void>(hipStreamDestroy(impl_->stream));
}

StreamHandle DeviceProblem::stream() const { return impl_->stream; }
const problem::Batch& DeviceProblem::batch() const { return impl_->batch; }

DecodeParams DeviceProblem::params(const Strategy& s, const problem::KvCache& host) {
  Impl& m = *impl_;
  const DeviceCache& c = m.cache(host);
  const int multiprocessors = planning_multiprocessors();  // this device's: a GPU runs here
  const std::size_t need = s.workspace_bytes(m.batch, multiprocessors);
  if (m.workspace.size() < need) m.workspace = DeviceBuffer<unsigned char>(need);

  DecodeParams p;
  p.num_requests = static_cast<int32_t>(m.batch.num_requests());
  p.total_q = static_cast<int32_t>(m.batch.total_q());
  p.qo_indptr = m.qo_indptr.get();
  p.kv_indptr = m.kv_indptr.get();
  p.kv_indices = m.batch.paged() ? m.kv_indices.get() : nullptr;
  p.page_indptr = m.batch.paged() ? m.page_indptr.get() : nullptr;
  p.page_size = m.batch.page_size();
  p.cache_rows = m.batch.cache_rows();
  p.max_kv_len = m.batch.max_kv_len();
  p.total_kv = m.batch.total_kv();
  p.multiprocessors = multiprocessors;
  p.q = m.q.get();
  switch (c.format) {
    case problem::KvFormat::bf16:
      p.kv_bf16 = reinterpret_cast<const uint16_t*>(c.data.get());
      break;
    case problem::KvFormat::fp8:
      p.kv_fp8 = c.data.get();
      p.kv_fp8_scale = c.fp8_scale;
      break;
    case problem::KvFormat::mxfp4:
      p.kv_mxfp4 = c.data.get();
      p.kv_mxfp4_scale = c.scales.get();
      break;
  }
  p.out = m.out.get();
  p.lse = m.lse.get();
  p.workspace = m.workspace.get();
  p.workspace_bytes = m.workspace.size();
  return p;
}

RunResult DeviceProblem::run(const Strategy& s, const problem::KvCache& host, KeepWorkspace keep) {
  Impl& m = *impl_;
  DecodeParams p = params(s, host);
  p.keep_partials = keep == KeepWorkspace::yes;  // drift reads the split partials back
  m.out.fill_bytes(kPoisonByte);
  m.lse.fill_bytes(kPoisonByte);
  m.workspace.fill_bytes(kPoisonByte);
  hipEvent_t start = nullptr, stop = nullptr;
  MLACHECK_GPU_CHECK(hipEventCreate(&start));
  RunResult r;
  try {
    MLACHECK_GPU_CHECK(hipEventCreate(&stop));
    MLACHECK_GPU_CHECK(hipDeviceSynchronize());  // the fills above ran on the default stream
    MLACHECK_GPU_CHECK(hipEventRecord(start, m.stream));
    s.launch(p, m.stream);
    MLACHECK_GPU_CHECK(hipEventRecord(stop, m.stream));
    MLACHECK_GPU_CHECK(hipEventSynchronize(stop));
    MLACHECK_GPU_CHECK(hipEventElapsedTime(&r.milliseconds, start, stop));
  } catch (...) {
    static_cast<void>(hipEventDestroy(start));
    if (stop != nullptr) static_cast<void>(hipEventDestroy(stop));
    throw;
  }
  static_cast<void>(hipEventDestroy(start));
  static_cast<void>(hipEventDestroy(stop));
  r.out = m.out.download();
  r.lse = m.lse.download();
  if (keep == KeepWorkspace::yes) r.workspace = m.workspace.download();
  return r;
}

}  // namespace mlacheck::gpu
