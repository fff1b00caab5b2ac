#include "gpu/mma/mma_check.h"

#include <stdexcept>
#include <string>

#include "gpu/device_buffer.h"
#include "gpu/mma/mma.h"
#include "gpu/platform.h"
#include "gpu/common/device_common.h"
#include "gpu/common/operand_decode.h"

namespace mlacheck::gpu {

namespace {

using common::block_sync;

// Shapes of the checked products (mma_check.h).
constexpr int kM = mma::kM;
constexpr int kN = kMmaCheckTiles * mma::kN;
constexpr int kK16 = kMmaCheckSteps * mma::kK16;
constexpr int kK8 = kMmaCheckSteps * mma::kK8;

// Padded shared rows: 16 bytes more than the data, so rows stay 16-byte aligned (the loads and
// async_copy_16 need it), start in other banks than a dense layout, and a load that strays past
// its row reads the poison below, not a neighbour's values.
constexpr int kPadBytes = 16;
constexpr int kStrideA16 = kK16 + kPadBytes / 2;  // elements; A and B rows (K contiguous)
constexpr int kStrideV16 = kN + kPadBytes / 2;    // elements; rows of B stored K x N
constexpr int kStride8 = kK8 + kPadBytes;         // bytes
// Poison: NaN in bf16 and f16 (0xFFFF) and in e4m3fn (0xFF); e4m3fnuz's NaN is 0x80.
constexpr uint8_t kPoison16 = 0xFF;
constexpr uint8_t kPoisonFn = 0xFF;
constexpr uint8_t kPoisonFnuz = 0x80;

// Fills `bytes` bytes of shared memory with `poison`; every thread of the block calls it.
__device__ void poison_shared(uint8_t* dst, int bytes, uint8_t poison) {
  for (int i = static_cast<int>(threadIdx.x); i < bytes; i += static_cast<int>(blockDim.x))
    dst[i] = poison;
}

// `rows` rows of `row_bytes` (a multiple of 16) from dense global memory to shared rows
// `dst_stride` bytes apart, 16 bytes per async_copy_16.
__device__ void copy_rows(uint8_t* dst, int dst_stride, const uint8_t* src, int row_bytes,
                          int rows) {
  const int chunks = row_bytes / 16;
  for (int c = static_cast<int>(threadIdx.x); c < rows * chunks;
       c += static_cast<int>(blockDim.x)) {
    const int r = c / chunks, q = c % chunks;
    mma::async_copy_16(dst + r * dst_stride + 16 * q, src + r * row_bytes + 16 * q, true);
  }
}

// C tile `tile` of D (kM x kN floats, row major) through get_i / get_j.
__device__ void store_tile(const mma::TileC& c, float* d, int tile) {
#pragma unroll
  for (int l = 0; l < mma::TileC::ne; ++l)
    d[mma::TileC::get_i(l) * kN + tile * mma::kN + mma::TileC::get_j(l)] = c.x[l];
}

__global__ void __launch_bounds__(kWarpSize) layer_info_kernel(int* out) {
  if (threadIdx.x != 0) return;
  out[0] = kWarpSize;
  out[1] = mma::kM;
  out[2] = mma::kN;
  out[3] = mma::kK16;
  out[4] = mma::kK8;
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  out[5] = mma::kK4;
  out[7] = mma::kHasFp8FnuzMma ? 1 : 0;
#else
  out[5] = 0;
  out[7] = 0;
#endif
  out[6] = mma::kHasFp8Mma ? 1 : 0;
  out[8] = mma::kHasScaledMma ? 1 : 0;
}
constexpr int kLayerInfoInts = 9;

template <Mma16 Type, bool Transposed>
__global__ void __launch_bounds__(kWarpSize)
    mma16_kernel(const uint16_t* a, const uint16_t* b, float* d) {
  constexpr int kBRows = Transposed ? kK16 : kN;
  constexpr int kStrideB = Transposed ? kStrideV16 : kStrideA16;
  __shared__ alignas(16) uint16_t sa[kM * kStrideA16];
  __shared__ alignas(16) uint16_t sb[kBRows * kStrideB];
  poison_shared(reinterpret_cast<uint8_t*>(sa), sizeof(sa), kPoison16);
  poison_shared(reinterpret_cast<uint8_t*>(sb), sizeof(sb), kPoison16);
  block_sync();
  copy_rows(reinterpret_cast<uint8_t*>(sa), 2 * kStrideA16, reinterpret_cast<const uint8_t*>(a),
            2 * kK16, kM);
  copy_rows(reinterpret_cast<uint8_t*>(sb), 2 * kStrideB, reinterpret_cast<const uint8_t*>(b),
            2 * (Transposed ? kN : kK16), kBRows);
  mma::async_commit();
  mma::async_wait<0>();
  block_sync();
  for (int t = 0; t < kMmaCheckTiles; ++t) {
    mma::TileC c;
    for (int s = 0; s < kMmaCheckSteps; ++s) {
      mma::TileA16 ta;
      mma::TileB16 tb;
      mma::load_a16(ta, sa + s * mma::kK16, kStrideA16);
      if constexpr (Transposed)
        mma::load_b16_trans(tb, sb + s * mma::kK16 * kStrideV16 + t * mma::kN, kStrideV16);
      else
        mma::load_b16(tb, sb + t * mma::kN * kStrideA16 + s * mma::kK16, kStrideA16);
      if constexpr (Type == Mma16::bf16)
        mma::mma_bf16(c, ta, tb);
      else
        mma::mma_f16(c, ta, tb);
    }
    store_tile(c, d, t);
  }
}

template <Mma8 Type>
__global__ void __launch_bounds__(kWarpSize)
    mma8_kernel(const uint8_t* a, const uint8_t* b, float* d) {
  constexpr uint8_t kPoison = Type == Mma8::e4m3fn ? kPoisonFn : kPoisonFnuz;
  __shared__ alignas(16) uint8_t sa[kM * kStride8];
  __shared__ alignas(16) uint8_t sb[kN * kStride8];
  poison_shared(sa, sizeof(sa), kPoison);
  poison_shared(sb, sizeof(sb), kPoison);
  block_sync();
  copy_rows(sa, kStride8, a, kK8, kM);
  copy_rows(sb, kStride8, b, kK8, kN);
  mma::async_commit();
  mma::async_wait<0>();
  block_sync();
  for (int t = 0; t < kMmaCheckTiles; ++t) {
    mma::TileC c;
    for (int s = 0; s < kMmaCheckSteps; ++s) {
      mma::TileA8 ta;
      mma::TileB8 tb;
      mma::load_a8(ta, sa + s * mma::kK8, kStride8);
      mma::load_b8(tb, sb + t * mma::kN * kStride8 + s * mma::kK8, kStride8);
      if constexpr (Type == Mma8::e4m3fn) {
        if constexpr (mma::kHasFp8Mma) mma::mma_e4m3(c, ta, tb);
      } else {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
        if constexpr (mma::kHasFp8FnuzMma) mma::mma_e4m3fnuz(c, ta, tb);
#endif
      }
    }
    store_tile(c, d, t);
  }
}

#if defined(MLACHECK_GPU_PLATFORM_AMD)
// mma_scaled_e2m1 exists on AMD only (gfx950); elsewhere in the AMD build the kernel is a trap.
// Rows of K4 / 2 bytes; each lane reads the E8M0 scales of its own row and K block from global.
constexpr int kK4 = kMmaCheckSteps * mma::kK4;
constexpr int kStride4 = kK4 / 2 + kPadBytes;  // bytes
constexpr int kBlocks4 = kK4 / 32;             // scales per row
constexpr uint8_t kPoison4 = 0x77;             // two E2M1 6.0: no NaN to poison with

__global__ void __launch_bounds__(kWarpSize)
    mma_scaled_e2m1_kernel(const uint8_t* a, const uint8_t* b, const uint8_t* scale_a,
                           const uint8_t* scale_b, float* d) {
  if constexpr (mma::kHasScaledMma) {
    __shared__ alignas(16) uint8_t sa[kM * kStride4];
    __shared__ alignas(16) uint8_t sb[kN * kStride4];
    poison_shared(sa, sizeof(sa), kPoison4);
    poison_shared(sb, sizeof(sb), kPoison4);
    block_sync();
    copy_rows(sa, kStride4, a, kK4 / 2, kM);
    copy_rows(sb, kStride4, b, kK4 / 2, kN);
    mma::async_commit();
    mma::async_wait<0>();
    block_sync();
    const int lane = mma::lane_id();
    const int row = lane % 16, block = lane / 16;  // the lane's scale (mma_amd.h)
    for (int t = 0; t < kMmaCheckTiles; ++t) {
      mma::TileC c;
      for (int s = 0; s < kMmaCheckSteps; ++s) {
        mma::TileA4 ta;
        mma::TileB4 tb;
        mma::load_a4(ta, sa + s * mma::kK4 / 2, kStride4);
        mma::load_b4(tb, sb + t * mma::kN * kStride4 + s * mma::kK4 / 2, kStride4);
        const int blk = s * (mma::kK4 / 32) + block;
        mma::mma_scaled_e2m1(c, ta, tb, scale_a[row * kBlocks4 + blk],
                             scale_b[(t * mma::kN + row) * kBlocks4 + blk]);
      }
      store_tile(c, d, t);
    }
  } else {
    __builtin_trap();  // the host checks kHasScaledMma first
  }
}
#endif

constexpr int kPairThreads = 256;

template <PairTo To>
__global__ void __launch_bounds__(kPairThreads) e4m3fn_pairs_kernel(uint32_t* out) {
  const int i = static_cast<int>(blockIdx.x) * kPairThreads + static_cast<int>(threadIdx.x);
  const auto codes = static_cast<uint16_t>(i);
  if constexpr (To == PairTo::bf16) {
    out[i] = common::e4m3fn_pair_to_bf16_pair(codes);
  } else if constexpr (To == PairTo::f16) {
    out[i] = common::e4m3fn_pair_to_f16_pair(codes);
  } else {
    uint32_t lo = 0, hi = 0;
    const uint32_t quad = codes | (static_cast<uint32_t>(codes) << 16);
    common::e4m3fn_quad_to_bf16_pairs(quad, lo, hi);  // as the Hopper kernel's decode_box
    out[i] = To == PairTo::bf16_quad_lo ? lo : hi;
  }
}

// One thread per float of first .. last: p = bits as p0 of a pair, and as p1 of a pair with the
// float as many bits from the other end (so each half sees every float).
template <PRounding To>
__global__ void p_rounding_kernel(uint32_t first, uint32_t last, unsigned long long* wrong, uint32_t* first_wrong) {
  const auto expect = [](uint32_t bits) -> uint32_t {
    const float p = quant::f32_from_bits(bits);
    if constexpr (To == PRounding::f16) return common::f16_bits(p);
    else return common::e4m3fn_to_f16_bits(quant::f32_to_fp8(p, quant::Fp8Format::e4m3fn));
  };
  const auto pair = [](float p0, float p1) {
    if constexpr (To == PRounding::f16) return common::f32_pair_to_f16_pair(p0, p1);
    else return common::p_pair_to_e4m3fn_f16_pair(p0, p1);
  };
  const auto same = [](uint32_t got, uint32_t want) {
    const auto nan = [](uint32_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; };
    return nan(want) ? nan(got) : got == want;
  };
  const uint64_t count = uint64_t{last} - first + 1;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x) {
    const auto bits = static_cast<uint32_t>(first + i);
    const auto mirror = static_cast<uint32_t>(last - i);
    const uint32_t as_lo = pair(quant::f32_from_bits(bits), quant::f32_from_bits(mirror));
    const uint32_t as_hi = pair(quant::f32_from_bits(mirror), quant::f32_from_bits(bits));
    const bool ok = same(as_lo & 0xFFFFu, expect(bits)) && same(as_hi >> 16, expect(bits));
    if (!ok) {
      atomicAdd(wrong, 1ull);
      atomicMin(first_wrong, bits);
    }
  }
}

// One thread per (scale, code byte): the word mxfp4_octet_word(code byte) through the decode as the
// Hopper a16w4 kernel takes it (the table lookups, for every scale).
__global__ void __launch_bounds__(kPairThreads) mxfp4_octets_kernel(uint32_t* out) {
  const int i = static_cast<int>(blockIdx.x) * kPairThreads + static_cast<int>(threadIdx.x);
  const auto scale = static_cast<uint32_t>(i) >> 8;
  const uint32_t codes = mxfp4_octet_word(static_cast<uint32_t>(i) & 0xFFu);
  uint32_t pairs[4];
  common::mxfp4_octet_to_bf16_pairs(codes, scale, pairs);
  for (int k = 0; k < 4; ++k) out[4 * i + k] = pairs[k];
}

__global__ void __launch_bounds__(kPairThreads) bf16_pairs_to_f16_kernel(uint32_t* out) {
  const int i = static_cast<int>(blockIdx.x) * kPairThreads + static_cast<int>(threadIdx.x);
  out[i] = common::bf16_pair_to_f16_pair(bf16_pair_word(static_cast<uint32_t>(i)));
}

constexpr int kCopyThreads = kAsyncCopyChunks / 2;
static_assert(kCopyThreads % kWarpSize == 0);

__global__ void __launch_bounds__(kCopyThreads)
    async_copy_kernel(const uint8_t* src, const uint8_t* valid, uint8_t* out) {
  __shared__ alignas(16) uint8_t s[16 * kAsyncCopyChunks];
  poison_shared(s, sizeof(s), 0xA5);
  block_sync();
  const int t = static_cast<int>(threadIdx.x);
  const int second = t + kCopyThreads;
  mma::async_copy_16(s + 16 * t, src + 16 * t, valid[t] != 0);
  mma::async_commit();
  mma::async_copy_16(s + 16 * second, src + 16 * second, valid[second] != 0);
  mma::async_commit();
  // The first group has landed after wait<1>, the barrier shows it to the other threads: each
  // thread reads back a chunk another thread copied.
  mma::async_wait<1>();
  block_sync();
  const int other = (t + kWarpSize + 1) % kCopyThreads;
  for (int i = 0; i < 16; ++i) out[16 * other + i] = s[16 * other + i];
  mma::async_wait<0>();
  block_sync();
  const int other2 = kCopyThreads + other;
  for (int i = 0; i < 16; ++i) out[16 * other2 + i] = s[16 * other2 + i];
}

void check_size(const char* what, std::size_t got, std::size_t expected) {
  if (got != expected)
    throw std::invalid_argument(std::string("mma check: ") + what + " has " + std::to_string(got) +
                                " elements, expected " + std::to_string(expected));
}

void finish_launch() {
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
}

// Output of kM x kN floats, every byte 0xFF (a NaN) until written.
DeviceBuffer<float> poisoned_output() {
  DeviceBuffer<float> d(static_cast<std::size_t>(kM) * kN);
  d.fill_bytes(0xFF);
  return d;
}

}  // namespace

MmaLayerInfo device_mma_layer_info() {
  DeviceBuffer<int> out(kLayerInfoInts);
  out.fill_bytes(0);
  layer_info_kernel<<<1, kWarpSize>>>(out.get());
  finish_launch();
  const std::vector<int> v = out.download();
  MmaLayerInfo info;
  info.warp_size = v[0];
  info.m = v[1];
  info.n = v[2];
  info.k16 = v[3];
  info.k8 = v[4];
  info.k4 = v[5];
  info.has_fp8 = v[6] != 0;
  info.has_fp8_fnuz = v[7] != 0;
  info.has_scaled = v[8] != 0;
  return info;
}

std::vector<float> device_mma16(Mma16 type, bool b_transposed, const std::vector<uint16_t>& a,
                                const std::vector<uint16_t>& b) {
  check_size("a", a.size(), static_cast<std::size_t>(kM) * kK16);
  check_size("b", b.size(), static_cast<std::size_t>(kN) * kK16);
  const DeviceBuffer<uint16_t> da(a), db(b);
  DeviceBuffer<float> d = poisoned_output();
  if (type == Mma16::bf16) {
    if (b_transposed)
      mma16_kernel<Mma16::bf16, true><<<1, kWarpSize>>>(da.get(), db.get(), d.get());
    else
      mma16_kernel<Mma16::bf16, false><<<1, kWarpSize>>>(da.get(), db.get(), d.get());
  } else {
    if (b_transposed)
      mma16_kernel<Mma16::f16, true><<<1, kWarpSize>>>(da.get(), db.get(), d.get());
    else
      mma16_kernel<Mma16::f16, false><<<1, kWarpSize>>>(da.get(), db.get(), d.get());
  }
  finish_launch();
  return d.download();
}

std::vector<float> device_mma8(Mma8 type, const std::vector<uint8_t>& a,
                               const std::vector<uint8_t>& b) {
  check_size("a", a.size(), static_cast<std::size_t>(kM) * kK8);
  check_size("b", b.size(), static_cast<std::size_t>(kN) * kK8);
  const MmaLayerInfo info = device_mma_layer_info();
  if (type == Mma8::e4m3fn ? !info.has_fp8 : !info.has_fp8_fnuz)
    throw std::logic_error(type == Mma8::e4m3fn ? "mma check: no e4m3fn product on this device"
                                                : "mma check: no e4m3fnuz product on this device");
  const DeviceBuffer<uint8_t> da(a), db(b);
  DeviceBuffer<float> d = poisoned_output();
  if (type == Mma8::e4m3fn)
    mma8_kernel<Mma8::e4m3fn><<<1, kWarpSize>>>(da.get(), db.get(), d.get());
  else
    mma8_kernel<Mma8::e4m3fnuz><<<1, kWarpSize>>>(da.get(), db.get(), d.get());
  finish_launch();
  return d.download();
}

std::vector<float> device_mma_scaled_e2m1([[maybe_unused]] const std::vector<uint8_t>& a,
                                          [[maybe_unused]] const std::vector<uint8_t>& b,
                                          [[maybe_unused]] const std::vector<uint8_t>& scale_a,
                                          [[maybe_unused]] const std::vector<uint8_t>& scale_b) {
#if defined(MLACHECK_GPU_PLATFORM_AMD)
  check_size("a", a.size(), static_cast<std::size_t>(kM) * kK4 / 2);
  check_size("b", b.size(), static_cast<std::size_t>(kN) * kK4 / 2);
  check_size("scale_a", scale_a.size(), static_cast<std::size_t>(kM) * kBlocks4);
  check_size("scale_b", scale_b.size(), static_cast<std::size_t>(kN) * kBlocks4);
  if (!device_mma_layer_info().has_scaled)
    throw std::logic_error("mma check: no scaled e2m1 product on this device");
  const DeviceBuffer<uint8_t> da(a), db(b), dsa(scale_a), dsb(scale_b);
  DeviceBuffer<float> d = poisoned_output();
  mma_scaled_e2m1_kernel<<<1, kWarpSize>>>(da.get(), db.get(), dsa.get(), dsb.get(), d.get());
  finish_launch();
  return d.download();
#else
  throw std::logic_error("mma check: the scaled e2m1 product is AMD gfx950's");
#endif
}

std::vector<uint32_t> device_e4m3fn_pairs(PairTo to) {
  constexpr int kPairs = 65536;
  DeviceBuffer<uint32_t> out(kPairs);
  out.fill_bytes(0xA5);
  switch (to) {
    case PairTo::bf16:
      e4m3fn_pairs_kernel<PairTo::bf16><<<kPairs / kPairThreads, kPairThreads>>>(out.get());
      break;
    case PairTo::f16:
      e4m3fn_pairs_kernel<PairTo::f16><<<kPairs / kPairThreads, kPairThreads>>>(out.get());
      break;
    case PairTo::bf16_quad_lo:
      e4m3fn_pairs_kernel<PairTo::bf16_quad_lo><<<kPairs / kPairThreads, kPairThreads>>>(out.get());
      break;
    case PairTo::bf16_quad_hi:
      e4m3fn_pairs_kernel<PairTo::bf16_quad_hi><<<kPairs / kPairThreads, kPairThreads>>>(out.get());
      break;
  }
  finish_launch();
  return out.download();
}

std::vector<uint32_t> device_mxfp4_octets() {
  constexpr int kCases = 256 * 256;
  DeviceBuffer<uint32_t> out(4 * kCases);
  out.fill_bytes(0xA5);
  mxfp4_octets_kernel<<<kCases / kPairThreads, kPairThreads>>>(out.get());
  finish_launch();
  return out.download();
}

std::vector<uint32_t> device_bf16_pairs_to_f16() {
  constexpr int kPairs = 65536;
  DeviceBuffer<uint32_t> out(kPairs);
  out.fill_bytes(0xA5);
  bf16_pairs_to_f16_kernel<<<kPairs / kPairThreads, kPairThreads>>>(out.get());
  finish_launch();
  return out.download();
}

PRoundingCheck device_p_pair_rounding(PRounding to, uint32_t first_bits, uint32_t last_bits) {
  if (last_bits < first_bits) throw std::invalid_argument("device_p_pair_rounding: last_bits < first_bits");
  DeviceBuffer<unsigned long long> wrong(1);
  DeviceBuffer<uint32_t> first_wrong(1);
  wrong.fill_bytes(0);
  first_wrong.fill_bytes(0xFF);
  constexpr int kBlocks = 1024, kThreads = 256;  // a grid-stride loop: any range in one launch
  if (to == PRounding::f16)
    p_rounding_kernel<PRounding::f16><<<kBlocks, kThreads>>>(first_bits, last_bits, wrong.get(), first_wrong.get());
  else
    p_rounding_kernel<PRounding::e4m3fn_f16><<<kBlocks, kThreads>>>(first_bits, last_bits, wrong.get(), first_wrong.get());
  finish_launch();
  PRoundingCheck r;
  r.wrong = wrong.download()[0];
  r.first_wrong_bits = first_wrong.download()[0];
  return r;
}

std::vector<uint8_t> device_async_copy_16(const std::vector<uint8_t>& src,
                                          const std::vector<uint8_t>& valid) {
  check_size("src", src.size(), static_cast<std::size_t>(16) * kAsyncCopyChunks);
  check_size("valid", valid.size(), kAsyncCopyChunks);
  const DeviceBuffer<uint8_t> dsrc(src), dvalid(valid);
  DeviceBuffer<uint8_t> out(src.size());
  out.fill_bytes(0x5A);  // not the kernel's shared poison: an unwritten byte shows as 0x5A
  async_copy_kernel<<<1, kCopyThreads>>>(dsrc.get(), dvalid.get(), out.get());
  finish_launch();
  return out.download();
}

}  // namespace mlacheck::gpu
