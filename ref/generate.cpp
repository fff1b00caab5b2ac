#include "ref/generate.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "ref/detmath.h"
#include "ref/layout.h"
#include "ref/progress_counter.h"
#include "ref/random.h"
#include "ref/streams.h"

namespace mlacheck::ref {
namespace {

using problem::kQkDim;
constexpr float kHarnessScale = 0.02f;  // the Python float 0.02 as PyTorch multiplies by it
constexpr int64_t kRowsPerTask = 64;    // rows one thread generates at a time

// bf16(fl32(bf16(z) · sigma)): a float32 normal rounded to bf16, times sigma, rounded again.
uint16_t scaled_normal(double z, float sigma) {
  const float zb = quant::bf16_to_f32(quant::f32_to_bf16(static_cast<float>(z)));
  return quant::f32_to_bf16(zb * sigma);
}

// ---- outliers ----------------------------------------------------------------------------

constexpr int kOutlierRope = 4, kOutlierLatent = 4;

// Per-channel scale of the cache: 0.02, or 0.02 · f for the outlier channels, f in [10, 100).
std::array<float, kQkDim> channel_scales(const CaseSpec& spec) {
  std::array<float, kQkDim> sigma;
  sigma.fill(kHarnessScale);
  if (spec.profile != Profile::outliers) return sigma;
  for (int j = 0; j < kOutlierRope + kOutlierLatent; ++j) {
    const bool rope = j < kOutlierRope;
    const int lo = rope ? problem::kVDim : 0;
    const int range = rope ? problem::kRopeDim : problem::kVDim;
    int c = lo + static_cast<int>(random_u32(spec.seed, stream::kOutlierChannels, j) % range);
    while (sigma[c] != kHarnessScale) c = lo + (c - lo + 1) % range;  // taken: next free channel
    // f = 10^(1 + u), u uniform in [0, 1): log-uniform in [10, 100).
    const double u = random_unit(spec.seed, stream::kOutlierChannels, 1000 + j);
    const double f = detmath::exp((1.0 + u) * 2.302585092994045684);  // ln 10
    sigma[c] = static_cast<float>(0.02 * f);
  }
  return sigma;
}

// ---- peaked ------------------------------------------------------------------------------

constexpr int kHotKeys = 4;
constexpr double kHotStrength[kHotKeys] = {0.625, 0.5625, 0.5, 0.4375};

// Which hot key (0..3) key t of request b is, or -1. The first draw wins a shared position.
int hot_index(uint64_t seed, int64_t b, int64_t len, int64_t t) {
  for (int j = 0; j < kHotKeys; ++j)
    if (static_cast<int64_t>(random_u32(seed, stream::kPeakHot, b * kHotKeys + j) % len) == t)
      return j;
  return -1;
}

// ---- boundary ----------------------------------------------------------------------------

constexpr double kBoundaryAmax = 0.21875;  // 448 · 2^-11: the harness FP8 scale becomes 2^-11
constexpr double kFp8Unit = 1.0 / 2048.0;  // 2^-11
constexpr int kBlock = problem::kMxfp4Block;
constexpr double kE2M1Ties[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};

struct BlockMax {
  double value;  // M > 0
  int position;  // 0..31
  bool negative;
};

BlockMax block_max(uint64_t seed, uint32_t block_stream, uint64_t block) {
  if (block == 0) return {kBoundaryAmax, 0, false};  // the tensor's amax, at element 0
  const auto w = philox_block(seed, block_stream, block);
  const int pos = static_cast<int>(w[2] % kBlock);
  const bool neg = (w[3] & 1u) != 0;
  switch (w[0] % 4) {
    case 0: {  // 6·2^k, k in [-12, -5]: E2M1 uses its whole range
      const int k = -12 + static_cast<int>(w[1] % 8);
      return {6.0 * detmath::detail::pow2(k), pos, neg};
    }
    case 1:  // 1.75·2^j, j in [-11, -3]: exactly where the E8M0 exponent rounds up (NUMERICS §5.2)
      return {1.75 * detmath::detail::pow2(-11 + static_cast<int>(w[1] % 9)), pos, neg};
    case 2:  // the bf16 just below 1.75·2^j: the exponent does not round up
      return {(1.75 - 1.0 / 128.0) * detmath::detail::pow2(-11 + static_cast<int>(w[1] % 9)), pos,
              neg};
    default:  // 2^j
      return {detmath::detail::pow2(-11 + static_cast<int>(w[1] % 9)), pos, neg};
  }
}

// Values y·2^-11 of the e4m3fn grid (codes 0..0x7E) and of the midpoints between neighbours.
struct Fp8Grid {
  std::array<double, 0x7F> value;
  std::array<double, 0x7E> midpoint;
  Fp8Grid() {
    for (int c = 0; c <= 0x7E; ++c)
      value[c] = quant::fp8_to_f32(static_cast<uint8_t>(c), quant::Fp8Format::e4m3fn) * kFp8Unit;
    for (int c = 0; c < 0x7E; ++c) midpoint[c] = (value[c] + value[c + 1]) / 2.0;  // exact
  }
};
const Fp8Grid& fp8_grid() {
  static const Fp8Grid grid;
  return grid;
}

// The seeded choice `sel` among the entries of the increasing table t that are <= limit, from
// index `first` on. t[first] <= limit always holds here: block maxima are >= 2^-11, the tables'
// first entries 2^-21 (midpoint) and 2^-20 (smallest subnormal code).
template <std::size_t N>
double pick_at_most(const std::array<double, N>& t, double limit, uint32_t sel, std::size_t first) {
  std::size_t n = first;
  while (n < N && t[n] <= limit) ++n;
  return t[first + sel % (n - first)];
}

uint16_t boundary_value(uint64_t seed, uint32_t elem_stream, uint32_t block_stream,
                        uint64_t index) {
  const BlockMax bm = block_max(seed, block_stream, index / kBlock);
  if (static_cast<int>(index % kBlock) == bm.position)
    return quant::f32_to_bf16(static_cast<float>(bm.negative ? -bm.value : bm.value));
  const int e = quant::mxfp4_block_exponent(static_cast<float>(bm.value));
  const double two_e = detmath::detail::pow2(e);
  const auto w = philox_block(seed, elem_stream, index);
  const uint32_t sel = w[1];
  double x = 0.0;
  bool nudge = false;
  switch (w[0] % 8) {
    case 0:
    case 1:  // an FP8 tie after the harness's x / 2^-11
      x = pick_at_most(fp8_grid().midpoint, bm.value, sel, 0);
      break;
    case 2:
      x = pick_at_most(fp8_grid().midpoint, bm.value, sel, 0);
      nudge = true;
      break;
    case 3:
    case 4:
    case 5: {  // an E2M1 tie after x · 2^-e
      int n = 0;
      while (n < 7 && kE2M1Ties[n] * two_e <= bm.value) ++n;
      x = kE2M1Ties[sel % n] * two_e;
      nudge = (w[0] % 8) == 5;
      break;
    }
    case 6:  // an exact FP8 grid point (codes 1..)
      x = pick_at_most(fp8_grid().value, bm.value, sel, 1);
      break;
    default:  // zero
      break;
  }
  uint16_t bits = quant::f32_to_bf16(static_cast<float>(x));  // exact: few significant bits
  if (nudge) {  // one bf16 ulp up or down, never above the block max
    bits = (w[2] & 1u) != 0 ? bits + 1 : bits - 1;
    if (quant::bf16_to_f32(bits) > bm.value) bits -= 2;
  }
  if ((w[3] & 1u) != 0) bits |= 0x8000;
  return bits;
}

// ---- rows --------------------------------------------------------------------------------

// One row of 576 values at logical index `base` (first element) of q or kv.
struct RowMaker {
  const CaseSpec& spec;
  std::array<float, kQkDim> kv_scale;

  void harness_row(uint32_t s, uint64_t base, const float* sigma, std::vector<double>& z,
                   uint16_t* out) const {
    fill_normals(spec.seed, s, base, z);
    for (int d = 0; d < kQkDim; ++d) out[d] = scaled_normal(z[d], sigma[d]);
  }
  void boundary_row(uint32_t s, uint32_t block_s, uint64_t base, uint16_t* out) const {
    for (int d = 0; d < kQkDim; ++d) out[d] = boundary_value(spec.seed, s, block_s, base + d);
  }
  void direction(int64_t b, std::vector<double>& u) const {
    fill_normals(spec.seed, stream::kPeakDirection, static_cast<uint64_t>(b) * kQkDim, u);
  }

  // Head row (q row `row`, head h) of request b.
  void q_row(int64_t b, int64_t row, int h, std::vector<double>& z, std::vector<double>& u,
             uint16_t* out) const {
    const uint64_t base = (static_cast<uint64_t>(row) * problem::kNumHeads + h) * kQkDim;
    std::array<float, kQkDim> sigma;
    sigma.fill(kHarnessScale);
    switch (spec.profile) {
      case Profile::harness:
      case Profile::outliers:
        harness_row(stream::kQ, base, sigma.data(), z, out);
        break;
      case Profile::peaked:
        fill_normals(spec.seed, stream::kQ, base, z);
        direction(b, u);
        for (int d = 0; d < kQkDim; ++d) out[d] = quant::f32_to_bf16(static_cast<float>(z[d] + u[d]));
        break;
      case Profile::boundary:
        boundary_row(stream::kBoundaryQ, stream::kBoundaryBlockQ, base, out);
        break;
    }
  }

  // Key t (logical index g) of request b with `len` keys.
  void kv_row(int64_t b, int64_t len, int64_t t, int64_t g, std::vector<double>& z,
              std::vector<double>& u, uint16_t* out) const {
    const uint64_t base = static_cast<uint64_t>(g) * kQkDim;
    switch (spec.profile) {
      case Profile::harness:
      case Profile::outliers:
        harness_row(stream::kKv, base, kv_scale.data(), z, out);
        break;
      case Profile::peaked: {
        const int hot = hot_index(spec.seed, b, len, t);
        if (hot < 0) {
          harness_row(stream::kKv, base, kv_scale.data(), z, out);
        } else {
          direction(b, u);
          for (int d = 0; d < kQkDim; ++d)
            out[d] = quant::f32_to_bf16(static_cast<float>(kHotStrength[hot] * u[d]));
        }
        break;
      }
      case Profile::boundary:
        boundary_row(stream::kBoundaryKv, stream::kBoundaryBlockKv, base, out);
        break;
    }
  }
};

// Request of each row of a CSR index: the b with indptr[b] <= row < indptr[b + 1].
int64_t owner(std::span<const int32_t> indptr, int64_t row) {
  return std::upper_bound(indptr.begin(), indptr.end(), row) - indptr.begin() - 1;
}

}  // namespace

Inputs generate(const CaseSpec& spec, Progress* progress) {
  Inputs in{make_batch(spec), {}, {}};
  const problem::Batch& batch = in.batch;
  const int64_t total_q = batch.total_q(), total_kv = batch.total_kv();
  in.q.resize(static_cast<std::size_t>(total_q) * problem::kNumHeads * kQkDim);
  in.kv.assign(static_cast<std::size_t>(batch.cache_rows()) * kQkDim,
               spec.poison_unused ? quant::kBf16NaN : uint16_t{0});
  const RowMaker maker{spec, channel_scales(spec)};
  ProgressCounter counter(progress, total_q + total_kv);
  const int64_t q_tasks = (total_q + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t kv_tasks = (total_kv + kRowsPerTask - 1) / kRowsPerTask;

#pragma omp parallel
  {
    std::vector<double> z(kQkDim), u(kQkDim);
    // Every value depends only on its logical index, so the schedule cannot change a bit.
#pragma omp for schedule(dynamic, 1)
    for (int64_t task = 0; task < q_tasks + kv_tasks; ++task) {
      const bool is_q = task < q_tasks;
      const int64_t first = (is_q ? task : task - q_tasks) * kRowsPerTask;
      const int64_t last = std::min(first + kRowsPerTask, is_q ? total_q : total_kv);
      for (int64_t r = first; r < last; ++r) {
        if (is_q) {
          const int64_t b = owner(batch.qo_indptr(), r);
          for (int h = 0; h < problem::kNumHeads; ++h)
            maker.q_row(b, r, h, z, u, in.q.data() + (r * problem::kNumHeads + h) * kQkDim);
        } else {
          const int64_t b = owner(batch.kv_indptr(), r);
          const int64_t t = r - batch.kv_indptr()[b];
          maker.kv_row(b, batch.kv_len(b), t, r, z, u, in.kv.data() + batch.kv_row(b, t) * kQkDim);
        }
      }
      counter.add(last - first);
    }
  }
  return in;
}

}  // namespace mlacheck::ref
