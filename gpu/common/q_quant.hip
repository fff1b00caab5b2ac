// Q quantization on the device, bit-exact to quant/bulk.h (the reference quantizes Q with those
// functions; tests/gpu/q_quant_test.cpp compares every code and the scale). fp8: one thread per vector of 8
// elements (per element for small or unaligned Q); MXFP4: one per pair of elements, 16 lanes a
// 32-element block. Grid-stride.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "gpu/platform.h"
#include "gpu/common/config.h"
#include "gpu/common/device_common.h"
#include "gpu/common/exact_quotient.h"
#include "gpu/common/grid_dependency.h"
#include "gpu/common/launch_kernel.h"
#include "gpu/common/kernels.h"
#include "gpu/warp.h"
#include "problem/shape.h"
#include "quant/bf16.h"
#include "quant/e2m1.h"
#include "quant/e8m0.h"
#include "quant/fp8.h"
#include "quant/nan_semantics.h"

namespace mlacheck::gpu::common {
namespace {

using problem::QFormat;

// bf16(1e-12): the harness's clamp(min=1e-12) of the amax (quant/fp8_bulk.cpp, NUMERICS §4).
constexpr uint16_t kHarnessAmaxFloorBf16 = 0x2B8D;
constexpr uint32_t kBf16AbsMask = 0x7FFF;
constexpr uint32_t kBf16Inf = 0x7F80;

// Clamp to [-m, m]; NaN passes through (as quant/fp8_bulk.cpp's clamp_symmetric).
__device__ __forceinline__ float clamp_symmetric(float v, float m) {
  return v > m ? m : (v < -m ? -m : v);
}

__device__ __forceinline__ std::size_t grid_stride() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}
__device__ __forceinline__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Q's elements in vectors of 8 (one 16-byte load, one 8-byte store of codes) where Q and the codes
// are aligned for them (QuantArgs::vector; Q's rows of 576 elements make every count a multiple of
// 8), else one at a time. With 2-byte loads, 36 a thread one after another, the amax kernel took
// 17.5 µs for the 2.4 M elements of a 256-token decode, and the encode kernel 19.1 (ncu, device run
// 2 of 2026-12-04), where reading 4.7 MB takes about 1 µs.
constexpr int kVector = 8;
struct alignas(16) QVector {
  uint16_t x[kVector];
};
struct alignas(8) CodeVector {
  uint8_t c[kVector];
};
// Below 8 tokens' elements the element-wise loops are kept: there the kernels' latencies are their
// whole cost, and with a vector a thread (fewer threads, each 8 elements in a row) the two took 3.8
// and 4.3 µs for 4 tokens against 3.0 and 3.9 (ncu, device runs 2 and 4 of 2026-12-04).
constexpr int64_t kVectorMinElements = int64_t{8} * problem::kNumHeads * problem::kQkDim;
// Vectors in flight per thread in the amax loop: their loads issued before any is used.
constexpr int kAmaxUnroll = 4;

// Step 1 of the per-tensor fp8 quantizers: the largest bf16 magnitude, as an integer (on
// magnitudes the integer order is the value order). The harness keeps NaN (a NaN magnitude exceeds
// every number, so the max is NaN iff some element is); aiter's dynamic quant skips NaN elements.
__device__ __forceinline__ uint32_t max_magnitude(uint32_t m, uint16_t x, bool skip_nan) {
  const uint32_t mag = x & kBf16AbsMask;
  return (skip_nan && mag > kBf16Inf) || mag <= m ? m : mag;
}

// kAmaxBlocks partial maxima, each of a block's grid-stride share of the vectors (or elements).
__global__ void __launch_bounds__(kQuantThreads) amax_kernel(QuantArgs a) {
  let_next_kernel_start();  // both: gpu/common/grid_dependency.h
  wait_for_previous_kernel();
  __shared__ uint32_t scratch[kQuantThreads / kWarpSize];
  const bool skip_nan = a.format == QFormat::fp8_dynamic;
  const auto n = static_cast<std::size_t>(a.elements);
  uint32_t m = 0;
  if (a.vector) {
    const std::size_t vectors = n / kVector;
    const auto* q = reinterpret_cast<const QVector*>(a.q);
    for (std::size_t v0 = global_thread(); v0 < vectors; v0 += kAmaxUnroll * grid_stride()) {
      QVector in[kAmaxUnroll];
#pragma unroll
      for (int u = 0; u < kAmaxUnroll; ++u) {
        const std::size_t v = v0 + u * grid_stride();
        in[u] = v < vectors ? q[v] : QVector{};
      }
#pragma unroll
      for (int u = 0; u < kAmaxUnroll; ++u)
#pragma unroll
        for (int k = 0; k < kVector; ++k) m = max_magnitude(m, in[u].x[k], skip_nan);
    }
  } else {
    for (std::size_t i = global_thread(); i < n; i += grid_stride()) m = max_magnitude(m, a.q[i], skip_nan);
  }
  m = block_max_u32<kQuantThreads>(m, scratch);
  if (threadIdx.x == 0) a.amax[blockIdx.x] = m;
}

// The per-tensor scale from the partial maxima, computed by every block (kAmaxBlocks values).
__device__ float tensor_scale(const QuantArgs& a, uint32_t* scratch) {
  static_assert(kAmaxBlocks <= kQuantThreads, "one partial per thread");
  const int partials = MLACHECK_MUTANT(a, fp8_q_scale_one_block) ? 1 : kAmaxBlocks;  // gpu/mutants.h
  const uint32_t mine = static_cast<int>(threadIdx.x) < partials ? a.amax[threadIdx.x] : 0u;
  const uint32_t amax = block_max_u32<kQuantThreads>(mine, scratch);
  if (a.format == QFormat::fp8_harness) {
    // NUMERICS §4 steps 2-3: clamp(min=1e-12) in bf16, s = bf16(fl32(a' * fl32(1/M))).
    const uint16_t floored =
        amax < kHarnessAmaxFloorBf16 ? kHarnessAmaxFloorBf16 : static_cast<uint16_t>(amax);
    return quant::bf16_to_f32(quant::f32_to_bf16(quant::bf16_to_f32(floored) * a.recip_max));
  }
  // fp8_dynamic: max over rows of fl32(rowAbsMax * fl32(1/M)) equals fl32(amax * fl32(1/M)), the
  // product being monotonic in the row maximum; an all-zero tensor has scale 0.
  return quant::bf16_to_f32(static_cast<uint16_t>(amax)) * a.recip_max;
}

// The e4m3fn code of a value already clamped to [-448, 448] (or NaN), f32_to_fp8's: on sm_89 and
// later one cvt.rn.satfinite (round to nearest even, subnormals included; inside the clamp it never
// saturates); a NaN takes f32_to_fp8's code, 0x7F with the NaN's sign. Elsewhere f32_to_fp8 itself.
// (GpuQQuant's log-uniform cases compare every code, subnormal, tie and zero ones included.)
__device__ __forceinline__ uint8_t e4m3fn_of_clamped(float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint16_t pair;  // the second source operand lands in the low byte
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(pair) : "f"(0.0f), "f"(v));
  const uint32_t bits = quant::f32_bits(v);
  return quant::detail::is_nan_bits(bits) ? static_cast<uint8_t>(0x7F | (bits >> 24 & 0x80)) : static_cast<uint8_t>(pair);
#else
  return quant::f32_to_fp8(v, quant::Fp8Format::e4m3fn, quant::Overflow::nan);
#endif
}

// The fp8 code of a value clamped to [-max, max] (or NaN).
template <quant::Fp8Format E>
__device__ __forceinline__ uint8_t fp8_of_clamped(float v) {
  if constexpr (E == quant::Fp8Format::e4m3fn) {
    return e4m3fn_of_clamped(v);
  } else {
    return quant::f32_to_fp8(v, E, quant::Overflow::nan);
  }
}

// The code of one element, for one Q format and one fp8 format (template arguments, so that the
// conversion's format constants fold). With both read at run time and vector loads, the encode
// kernel was 5000 instructions (cuobjdump) and took 15.4 µs for 256 tokens; per format, with the
// division by exact_quotient and e4m3fn by cvt, 1200 and 10.9 µs, 53 instructions issued per
// element (ncu, device runs 3-4 of 2026-12-04).
template <QFormat F, quant::Fp8Format E>
struct Fp8Encoder {
  float scale = 1.0f;  // harness: s; dynamic / static: the scale; cast: unused
  float inv = 1.0f;    // dynamic / static: what x is multiplied by
  ExactDivisor divisor;  // harness: fl32(x / s) by exact_quotient where both are in its window
  bool divisor_fits = false;
  quant::Overflow cast_overflow = quant::Overflow::saturate;
  __device__ uint8_t operator()(uint16_t bits) const {
    constexpr float m = quant::fp8_max(E);
    const float x = quant::bf16_to_f32(bits);
    if constexpr (F == QFormat::fp8_harness) {  // NUMERICS §4 steps 4-6, bf16 intermediates
      const float quotient = divisor_fits && dividend_in_window(x) ? exact_quotient(x, divisor) : x / scale;
      const uint16_t q = quant::f32_to_bf16(quotient);
      const uint16_t y = quant::f32_to_bf16(clamp_symmetric(quant::bf16_to_f32(q), m));
      return fp8_of_clamped<E>(quant::bf16_to_f32(y));
    } else if constexpr (F == QFormat::fp8_dynamic || F == QFormat::fp8_static) {
      // aiter's element rule (NUMERICS §4.1). A NaN product goes to f32_to_fp8 as it is: passed
      // through the clamp, a negative NaN came out 0x7F, not 0xFF (its sign lost on the way;
      // GpuQQuant fp8_dynamic_nan_*, device run 4 of 2026-12-04).
      const float v = quant::detail::mul_amd_nan(x, inv);
      if (quant::detail::is_nan_bits(quant::f32_bits(v))) return quant::f32_to_fp8(v, E, quant::Overflow::nan);
      return fp8_of_clamped<E>(clamp_symmetric(v, m));
    } else {
      static_assert(F == QFormat::fp8_cast);
      return quant::f32_to_fp8(x, E, cast_overflow);
    }
  }
};

// Per-tensor fp8 codes (harness, dynamic, static, cast) and the scale.
template <QFormat F, quant::Fp8Format E>
__global__ void __launch_bounds__(kQuantThreads) fp8_encode_kernel(QuantArgs a) {
  let_next_kernel_start();  // both: gpu/common/grid_dependency.h
  wait_for_previous_kernel();
  __shared__ uint32_t scratch[kQuantThreads / kWarpSize];
  Fp8Encoder<F, E> enc;
  enc.cast_overflow = a.cast_overflow;
  if constexpr (F == QFormat::fp8_harness || F == QFormat::fp8_dynamic) {
    enc.scale = tensor_scale(a, scratch);
    if constexpr (F == QFormat::fp8_dynamic) {
      enc.inv = enc.scale == 0.0f ? 0.0f : 1.0f / enc.scale;  // all-zero input: codes are signed zeros
    } else {
      enc.divisor = exact_divisor(enc.scale);
      enc.divisor_fits = divisor_in_window(enc.scale);
    }
  } else if constexpr (F == QFormat::fp8_static) {
    enc.scale = a.static_scale;
    enc.inv = a.static_inv;
  }
  if (a.scale != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *a.scale = enc.scale;
  const auto n = static_cast<std::size_t>(a.elements);
  if (!a.vector) {
    for (std::size_t i = global_thread(); i < n; i += grid_stride()) a.codes[i] = enc(a.q[i]);
    return;
  }
  const auto* q = reinterpret_cast<const QVector*>(a.q);
  auto* codes = reinterpret_cast<CodeVector*>(a.codes);
  for (std::size_t v = global_thread(); v < n / kVector; v += grid_stride()) {
    const QVector in = q[v];
    CodeVector out;
#pragma unroll
    for (int k = 0; k < kVector; ++k) out.c[k] = enc(in.x[k]);
    codes[v] = out;
  }
}

// 2^-e as float32 for an MXFP4 block exponent e; e = 127 flushes to 0 (quant/mxfp4_bulk.cpp).
__device__ __forceinline__ float block_multiplier(int e) {
  if (e >= 127) return 0.0f;
  return quant::f32_from_bits(static_cast<uint32_t>(127 - e) << 23);
}

// aiter's dynamic_mxfp4_quant of every 32-element block (NUMERICS §5): a group of 16 lanes per
// block, each lane one pair of elements (one 4-byte load, one code byte: low nibble = even element),
// the block's amax by a butterfly over the group (the max of the same magnitudes: exact). (One
// thread per block, as first built, made its 32 loads and 32 conversions one after another: 14.6 µs
// for the 1152 blocks of a 4 x 1024 decode's Q, a third of the a4w4 call; ncu, device run 1 of
// 2026-12-03's seventh session.)
constexpr int kMxfp4PairLanes = problem::kMxfp4Block / 2;
__global__ void __launch_bounds__(kQuantThreads) mxfp4_encode_kernel(QuantArgs a) {
  let_next_kernel_start();  // both: gpu/common/grid_dependency.h
  wait_for_previous_kernel();
  static_assert(kWarpSize % kMxfp4PairLanes == 0 && kQuantThreads % kWarpSize == 0,
                "whole groups in every warp, whole warps in every block");
  const std::size_t pairs = static_cast<std::size_t>(a.elements) / 2;  // a multiple of 16
  const int warp_lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int lane = warp_lane % kMxfp4PairLanes;
  const bool skip_last = MLACHECK_MUTANT(a, mxfp4_q_amax_skips_last);  // gpu/mutants.h
  // The loop's bounds are the warp's, so that every lane reaches the shuffles; a group lies wholly
  // inside or outside the pairs.
  for (std::size_t first = global_thread() - warp_lane; first < pairs; first += grid_stride()) {
    const std::size_t pair = first + warp_lane;
    const bool valid = pair < pairs;
    const uint32_t two = valid ? reinterpret_cast<const uint32_t*>(a.q)[pair] : 0u;
    // NaNs ignored (they compare false), Inf wins.
    float amax = 0.0f;
    const float even = quant::bf16_to_f32(static_cast<uint16_t>(two & kBf16AbsMask));
    const float odd = quant::bf16_to_f32(static_cast<uint16_t>((two >> 16) & kBf16AbsMask));
    amax = even > amax ? even : amax;
    if (!(skip_last && lane == kMxfp4PairLanes - 1)) amax = odd > amax ? odd : amax;
#pragma unroll
    for (int mask = 1; mask < kMxfp4PairLanes; mask *= 2) {
      const float other = shfl_xor<kMxfp4PairLanes>(amax, mask);
      amax = other > amax ? other : amax;
    }
    if (!valid) continue;
    const int e = quant::mxfp4_block_exponent(amax);
    if (lane == 0) a.block_scales[pair / kMxfp4PairLanes] = quant::e8m0_from_exponent(e);
    const float qs = block_multiplier(e);
    const uint8_t lo = quant::f32_to_e2m1(
        quant::detail::mul_amd_nan(quant::bf16_to_f32(static_cast<uint16_t>(two & 0xFFFFu)), qs), a.rounding);
    const uint8_t hi = quant::f32_to_e2m1(
        quant::detail::mul_amd_nan(quant::bf16_to_f32(static_cast<uint16_t>(two >> 16)), qs), a.rounding);
    a.codes[pair] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

unsigned grid_for(int64_t work) {
  // Enough blocks to fill any of the target GPUs several times; the loops stride over the rest.
  constexpr int64_t kMaxBlocks = 4096;
  const int64_t blocks = (work + kQuantThreads - 1) / kQuantThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

// The amax kernel where the format has a per-tensor scale, then the encode kernel of the recipe's
// fp8 format.
template <QFormat F>
void launch_fp8(const QuantArgs& args, hipStream_t stream) {
  KernelStart encode_start = KernelStart::after_previous;
  QuantArgs a = args;
  a.vector = a.elements >= kVectorMinElements && reinterpret_cast<std::uintptr_t>(a.q) % sizeof(QVector) == 0 &&
             reinterpret_cast<std::uintptr_t>(a.codes) % sizeof(CodeVector) == 0 && a.elements % kVector == 0;
  if constexpr (F == QFormat::fp8_harness || F == QFormat::fp8_dynamic) {
    launch_kernel(amax_kernel, dim3(kAmaxBlocks), dim3(kQuantThreads), 0, stream, KernelStart::after_previous, a);
    encode_start = KernelStart::with_previous;
  }
  const unsigned grid = grid_for(a.vector ? a.elements / kVector : a.elements);
  switch (a.fp8) {
    case quant::Fp8Format::e4m3fn:
      launch_kernel(fp8_encode_kernel<F, quant::Fp8Format::e4m3fn>, dim3(grid), dim3(kQuantThreads), 0, stream,
                    encode_start, a);
      break;
    case quant::Fp8Format::e4m3fnuz:
      launch_kernel(fp8_encode_kernel<F, quant::Fp8Format::e4m3fnuz>, dim3(grid), dim3(kQuantThreads), 0, stream,
                    encode_start, a);
      break;
  }
}

}  // namespace

bool launch_q_quant(const QuantArgs& args, StreamHandle handle) {
  if (args.format == QFormat::bf16 || args.elements == 0) return false;
  const auto stream = static_cast<hipStream_t>(handle);
  switch (args.format) {
    case QFormat::fp8_harness:
      launch_fp8<QFormat::fp8_harness>(args, stream);
      break;
    case QFormat::fp8_dynamic:
      launch_fp8<QFormat::fp8_dynamic>(args, stream);
      break;
    case QFormat::fp8_static:
      launch_fp8<QFormat::fp8_static>(args, stream);
      break;
    case QFormat::fp8_cast:
      launch_fp8<QFormat::fp8_cast>(args, stream);
      break;
    case QFormat::mxfp4_dynamic:
      // The kernel reads Q a pair of elements at a time.
      if (reinterpret_cast<std::uintptr_t>(args.q) % 4 != 0)
        throw std::invalid_argument("MXFP4 Q quantization: Q must be 4-byte aligned");
      launch_kernel(mxfp4_encode_kernel, dim3(grid_for(args.elements / 2)), dim3(kQuantThreads), 0, stream,
                    KernelStart::after_previous, args);
      break;
    case QFormat::bf16:
      return false;
    case QFormat::bf16_scaled:  // a judging-only format (compare --q): no kernel quantizes so
      throw std::invalid_argument("no GPU kernel quantizes Q as bf16-scaled");
  }
  return true;
}

}  // namespace mlacheck::gpu::common
