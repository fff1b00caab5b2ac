// Q quantization on the device, bit-exact to quant/bulk.h (the reference quantizes Q with those
// functions; tests/gpu/q_quant_test.cpp compares every code and the scale). One thread per element
// (fp8) or per pair of elements (MXFP4, 16 lanes a 32-element block), grid-stride.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "gpu/platform.h"
#include "gpu/common/config.h"
#include "gpu/common/device_common.h"
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

// Step 1 of the per-tensor fp8 quantizers: the largest bf16 magnitude, as an integer (on
// magnitudes the integer order is the value order). The harness keeps NaN (a NaN magnitude exceeds
// every number, so the max is NaN iff some element is); aiter's dynamic quant skips NaN elements.
__global__ void __launch_bounds__(kQuantThreads) amax_kernel(QuantArgs a) {
  __shared__ uint32_t scratch[kQuantThreads / kWarpSize];
  const bool skip_nan = a.format == QFormat::fp8_dynamic;
  uint32_t m = 0;
  for (std::size_t i = global_thread(); i < static_cast<std::size_t>(a.elements);
       i += grid_stride()) {
    const uint32_t mag = a.q[i] & kBf16AbsMask;
    if (skip_nan && mag > kBf16Inf) continue;
    m = mag > m ? mag : m;
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

// Per-tensor fp8 codes (harness, dynamic, static, cast) and the scale.
__global__ void __launch_bounds__(kQuantThreads) fp8_encode_kernel(QuantArgs a) {
  __shared__ uint32_t scratch[kQuantThreads / kWarpSize];
  const float m = quant::fp8_max(a.fp8);
  float scale = 1.0f;  // harness: s; dynamic / static: the scale; cast: unused
  float inv = 1.0f;    // dynamic / static: what x is multiplied by
  switch (a.format) {
    case QFormat::fp8_harness:
      scale = tensor_scale(a, scratch);
      break;
    case QFormat::fp8_dynamic:
      scale = tensor_scale(a, scratch);
      inv = scale == 0.0f ? 0.0f : 1.0f / scale;  // all-zero input: codes are signed zeros
      break;
    case QFormat::fp8_static:
      scale = a.static_scale;
      inv = a.static_inv;
      break;
    default:
      break;
  }
  if (a.scale != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *a.scale = scale;
  for (std::size_t i = global_thread(); i < static_cast<std::size_t>(a.elements);
       i += grid_stride()) {
    const float x = quant::bf16_to_f32(a.q[i]);
    uint8_t code = 0;
    switch (a.format) {
      case QFormat::fp8_harness: {  // NUMERICS §4 steps 4-6, bf16 intermediates
        const uint16_t q = quant::f32_to_bf16(x / scale);
        const uint16_t y = quant::f32_to_bf16(clamp_symmetric(quant::bf16_to_f32(q), m));
        code = quant::f32_to_fp8(quant::bf16_to_f32(y), a.fp8, quant::Overflow::nan);
        break;
      }
      case QFormat::fp8_dynamic:
      case QFormat::fp8_static:  // aiter's element rule (NUMERICS §4.1)
        code = quant::f32_to_fp8(clamp_symmetric(quant::detail::mul_amd_nan(x, inv), m), a.fp8,
                                 quant::Overflow::nan);
        break;
      default:  // fp8_cast
        code = quant::f32_to_fp8(x, a.fp8, a.cast_overflow);
        break;
    }
    a.codes[i] = code;
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

}  // namespace

void launch_q_quant(const QuantArgs& args, StreamHandle handle) {
  if (args.format == QFormat::bf16 || args.elements == 0) return;
  const auto stream = static_cast<hipStream_t>(handle);
  switch (args.format) {
    case QFormat::fp8_harness:
    case QFormat::fp8_dynamic:
      amax_kernel<<<kAmaxBlocks, kQuantThreads, 0, stream>>>(args);
      MLACHECK_GPU_CHECK(hipGetLastError());
      [[fallthrough]];
    case QFormat::fp8_static:
    case QFormat::fp8_cast:
      fp8_encode_kernel<<<grid_for(args.elements), kQuantThreads, 0, stream>>>(args);
      break;
    case QFormat::mxfp4_dynamic:
      // The kernel reads Q a pair of elements at a time.
      if (reinterpret_cast<std::uintptr_t>(args.q) % 4 != 0)
        throw std::invalid_argument("MXFP4 Q quantization: Q must be 4-byte aligned");
      mxfp4_encode_kernel<<<grid_for(args.elements / 2), kQuantThreads, 0, stream>>>(args);
      break;
    case QFormat::bf16:
      break;
    case QFormat::bf16_scaled:  // a judging-only format (compare --q): no kernel quantizes so
      throw std::invalid_argument("no GPU kernel quantizes Q as bf16-scaled");
  }
  MLACHECK_GPU_CHECK(hipGetLastError());
}

}  // namespace mlacheck::gpu::common
