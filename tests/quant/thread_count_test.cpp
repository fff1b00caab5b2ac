// The bulk quantizers give identical bytes for any OpenMP thread count (quant/bulk.h promise):
// large random inputs, full of ties, NaN, Inf and extreme values, quantized with 1 thread and
// with several, compared byte for byte.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "quant/bulk.h"
#include "tests/quant/random_data.h"

namespace mlacheck::quant {
namespace {

constexpr std::size_t kRowLen = 576;        // the MLA KV row (NUMERICS §6.1)
constexpr std::size_t kRows = 2048;         // ~1.2 M elements: many chunks per thread
constexpr int kThreadCounts[] = {2, 3, 8};  // even, odd, more threads than cores

// Runs fn() with `threads` OpenMP threads, restoring the previous setting afterwards.
template <class Fn>
void with_threads(int threads, Fn fn) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  fn();
  omp_set_num_threads(before);
}

bool same_bytes(const auto& a, const auto& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

struct Outputs {
  explicit Outputs(std::size_t n)
      : harness(n),
        harness_rows(n),
        dynamic(n),
        cast(n),
        mxfp4_rne(n / 2),
        mxfp4_scales_rne(n / kMxfp4BlockSize),
        mxfp4_away(n / 2),
        mxfp4_scales_away(n / kMxfp4BlockSize),
        harness_y(n),
        dequant(n) {}
  std::vector<uint8_t> harness, harness_rows, dynamic, cast, mxfp4_rne, mxfp4_scales_rne, mxfp4_away,
      mxfp4_scales_away;
  std::vector<uint16_t> harness_y;
  std::vector<float> dequant;
  float harness_scale = 0.0f, harness_rows_scale = 0.0f, dynamic_scale = 0.0f;
};

void run_all(const std::vector<uint16_t>& xb, const std::vector<float>& xf, Outputs& o) {
  o.harness_scale = fp8_harness_quantize(xb, Fp8Format::e4m3fn, o.harness, o.harness_y);
  // Every third row unread: the over-read-rows rule of the golden FP8 cache (quant/bulk.h).
  std::vector<bool> read(xb.size() / kRowLen);
  for (std::size_t r = 0; r < read.size(); ++r) read[r] = r % 3 != 0;
  o.harness_rows_scale = fp8_harness_quantize_rows(xb, kRowLen, read, Fp8Format::e4m3fn, o.harness_rows);
  o.dynamic_scale = fp8_dynamic_quantize(xf, kRowLen, Fp8Format::e4m3fnuz, o.dynamic);
  fp8_cast(xf, Fp8Format::e4m3fn, Overflow::saturate, o.cast);
  mxfp4_quantize(xf, kRowLen, E2M1Rounding::rne, o.mxfp4_rne, o.mxfp4_scales_rne);
  mxfp4_quantize(xf, kRowLen, E2M1Rounding::ties_away, o.mxfp4_away, o.mxfp4_scales_away);
  mxfp4_dequantize(o.mxfp4_rne, o.mxfp4_scales_rne, kRowLen, o.dequant);
}

TEST(QuantThreadCount, BulkQuantizersGiveIdenticalBytes) {
  const auto xb = testing::random_bf16_normal(kRows * kRowLen, 9826);
  const auto xf = testing::random_hostile_floats(kRows * kRowLen, 5415);
  Outputs one(xf.size());
  with_threads(1, [&] { run_all(xb, xf, one); });
  for (const int t : kThreadCounts) {
    Outputs many(xf.size());
    with_threads(t, [&] {
      int seen = 0;
#pragma omp parallel
      {
#pragma omp single
        seen = omp_get_num_threads();
      }
      EXPECT_EQ(seen, t) << "OpenMP did not give the requested thread count";
      run_all(xb, xf, many);
    });
    EXPECT_TRUE(same_bytes(one.harness, many.harness)) << t << " threads: harness codes";
    EXPECT_TRUE(same_bytes(one.harness_y, many.harness_y)) << t << " threads: harness y";
    EXPECT_EQ(one.harness_scale, many.harness_scale) << t << " threads";
    EXPECT_TRUE(same_bytes(one.harness_rows, many.harness_rows)) << t << " threads: harness codes, rows read";
    EXPECT_EQ(one.harness_rows_scale, many.harness_rows_scale) << t << " threads";
    EXPECT_TRUE(same_bytes(one.dynamic, many.dynamic)) << t << " threads: dynamic codes";
    EXPECT_EQ(one.dynamic_scale, many.dynamic_scale) << t << " threads";
    EXPECT_TRUE(same_bytes(one.cast, many.cast)) << t << " threads: cast";
    EXPECT_TRUE(same_bytes(one.mxfp4_rne, many.mxfp4_rne)) << t << " threads: mxfp4 rne";
    EXPECT_TRUE(same_bytes(one.mxfp4_scales_rne, many.mxfp4_scales_rne)) << t << " threads";
    EXPECT_TRUE(same_bytes(one.mxfp4_away, many.mxfp4_away)) << t << " threads: mxfp4 ties-away";
    EXPECT_TRUE(same_bytes(one.mxfp4_scales_away, many.mxfp4_scales_away)) << t << " threads";
    EXPECT_TRUE(same_bytes(one.dequant, many.dequant)) << t << " threads: dequantized";
  }
}

}  // namespace
}  // namespace mlacheck::quant
