// sm_90a builds only (gpu/CMakeLists.txt: compiled where CMAKE_CUDA_ARCHITECTURES holds 90a): the warpgroup product of gpu/sm90/wgmma.h
// on the device, for tests/gpu/wgmma_test.cpp. One warpgroup: the operands are copied into shared
// memory in the no-swizzle K-major layout (poisoned first), K / 16 products accumulate into one
// 64 x 64 tile, each thread writes its fragment back by get_i / get_j. The register-A and decode
// tile kernels are templates on the operand type (sm90::WgOperand), one body for bf16 and f16;
// their poison 0x7FC0 is a NaN read as either. The e4m3 kernel's operands are 8-bit (KMajorLayout8,
// poison 0x7F, e4m3fn's NaN) and its accumulator starts from a given C.
#include "gpu/sm90/wgmma_check.h"

#include <stdexcept>
#include <string>

#include "gpu/device_buffer.h"
#include "gpu/platform.h"
#include "gpu/sm90/wgmma.h"

namespace mlacheck::gpu {
namespace {

constexpr int kMaxK = 128;  // two 16 KB operands: inside the 48 KB of static shared memory

__global__ void __launch_bounds__(sm90::kWarpgroupThreads)
    wgmma_kernel(const uint16_t* a, const uint16_t* b, int k, float* d) {
  __shared__ alignas(128) uint16_t sa[sm90::kWgM * kMaxK];
  __shared__ alignas(128) uint16_t sb[64 * kMaxK];
  const int t = static_cast<int>(threadIdx.x);
  const sm90::KMajorLayout layout{k};
  for (int i = t; i < sm90::kWgM * kMaxK; i += sm90::kWarpgroupThreads) sa[i] = sb[i] = 0x7FC0;  // NaN
  __syncthreads();
  for (int i = t; i < sm90::kWgM * k; i += sm90::kWarpgroupThreads) {
    const int row = i / k, kk = i % k;
    sa[layout.offset_bytes(row, kk) / 2] = a[i];
    sb[layout.offset_bytes(row, kk) / 2] = b[i];
  }
  __syncthreads();
  // Shared-memory writes by the generic proxy must be visible to the asynchronous proxy wgmma uses.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  sm90::WgTileC64x64 acc;
  for (float& x : acc.x) x = 0.0f;
  sm90::wgmma_fence();
  for (int k0 = 0; k0 < k; k0 += sm90::kWgK16) {
    const int start = layout.offset_bytes(0, k0);
    const uint64_t da = sm90::smem_descriptor(reinterpret_cast<const unsigned char*>(sa) + start,
                                              layout.leading_bytes(), layout.stride_bytes());
    const uint64_t db = sm90::smem_descriptor(reinterpret_cast<const unsigned char*>(sb) + start,
                                              layout.leading_bytes(), layout.stride_bytes());
    sm90::wgmma_bf16_m64n64k16(acc, da, db, k0 > 0);
  }
  sm90::wgmma_commit();
  sm90::wgmma_wait<0>();
  for (int l = 0; l < sm90::WgTileC64x64::ne; ++l)
    d[sm90::WgTileC64x64::get_i(l) * 64 + sm90::WgTileC64x64::get_j(l)] = acc.x[l];
}

// A from registers: thread (warp w, lane g * 4 + t) loads rows 16 w + g (+ 8), columns 2 t, 2 t + 1
// (+ 8) of each K step, as WgFragA64x16 says.
template <sm90::WgOperand T>
__global__ void __launch_bounds__(sm90::kWarpgroupThreads)
    wgmma_rs_kernel(const uint16_t* a, const uint16_t* b, int k, float* d) {
  __shared__ alignas(128) uint16_t sb[16 * kMaxK];
  const int tid = static_cast<int>(threadIdx.x);
  const sm90::KMajorLayout layout{k};
  for (int i = tid; i < 16 * kMaxK; i += sm90::kWarpgroupThreads) sb[i] = 0x7FC0;  // NaN
  __syncthreads();
  for (int i = tid; i < 16 * k; i += sm90::kWarpgroupThreads)
    sb[layout.offset_bytes(i / k, i % k) / 2] = b[i];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);
  const auto pair = [&](int r, int c) {
    return static_cast<uint32_t>(a[r * k + c]) | (static_cast<uint32_t>(a[r * k + c + 1]) << 16);
  };
  sm90::WgTileC64x16 acc;
  for (float& x : acc.x) x = 0.0f;
  for (int k0 = 0; k0 < k; k0 += sm90::kWgK16) {
    sm90::WgFragA64x16 frag;
    frag.x[0] = pair(row, k0 + col);
    frag.x[1] = pair(row + 8, k0 + col);
    frag.x[2] = pair(row, k0 + col + 8);
    frag.x[3] = pair(row + 8, k0 + col + 8);
    sm90::wgmma_fence_operand(acc);
    sm90::wgmma_fence();
    const uint64_t db = sm90::smem_descriptor(reinterpret_cast<const unsigned char*>(sb) +
                                                  layout.offset_bytes(0, k0),
                                              layout.leading_bytes(), layout.stride_bytes());
    sm90::wgmma_m64n16k16_rs<T>(acc, frag, db, k0 > 0);
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    sm90::wgmma_fence_fragment(frag);
    sm90::wgmma_fence_operand(acc);
  }
  for (int l = 0; l < sm90::WgTileC64x16::ne; ++l)
    d[sm90::WgTileC64x16::get_i(l) * 16 + sm90::WgTileC64x16::get_j(l)] = acc.x[l];
}

// The e4m3 product: both operands K-major in shared memory (poisoned with the NaN code 0x7F first),
// the accumulator loaded from c, K / 32 products accumulated onto it.
__global__ void __launch_bounds__(sm90::kWarpgroupThreads)
    wgmma_e4m3_kernel(const uint8_t* a, const uint8_t* b, const float* c, int k, float* d) {
  __shared__ alignas(128) uint8_t sa[sm90::kWgM * kMaxK];
  __shared__ alignas(128) uint8_t sb[16 * kMaxK];
  const int t = static_cast<int>(threadIdx.x);
  const sm90::KMajorLayout8 layout{k};
  for (int i = t; i < sm90::kWgM * kMaxK; i += sm90::kWarpgroupThreads) sa[i] = 0x7F;  // e4m3fn NaN
  for (int i = t; i < 16 * kMaxK; i += sm90::kWarpgroupThreads) sb[i] = 0x7F;
  __syncthreads();
  for (int i = t; i < sm90::kWgM * k; i += sm90::kWarpgroupThreads) sa[layout.offset_bytes(i / k, i % k)] = a[i];
  for (int i = t; i < 16 * k; i += sm90::kWarpgroupThreads) sb[layout.offset_bytes(i / k, i % k)] = b[i];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  sm90::WgTileC64x16 acc;
  for (int l = 0; l < sm90::WgTileC64x16::ne; ++l)
    acc.x[l] = c[sm90::WgTileC64x16::get_i(l) * 16 + sm90::WgTileC64x16::get_j(l)];
  sm90::wgmma_fence_operand(acc);
  sm90::wgmma_fence();
  for (int k0 = 0; k0 < k; k0 += sm90::kWgK32) {
    const int start = layout.offset_bytes(0, k0);
    sm90::wgmma_m64n16k32_e4m3(acc,
                               sm90::smem_descriptor(sa + start, layout.leading_bytes(), layout.stride_bytes()),
                               sm90::smem_descriptor(sb + start, layout.leading_bytes(), layout.stride_bytes()),
                               true);
  }
  sm90::wgmma_commit();
  sm90::wgmma_wait<0>();
  sm90::wgmma_fence_operand(acc);
  for (int l = 0; l < sm90::WgTileC64x16::ne; ++l)
    d[sm90::WgTileC64x16::get_i(l) * 16 + sm90::WgTileC64x16::get_j(l)] = acc.x[l];
}

// The e4m3 register-A product: thread (warp w, lane g * 4 + t) loads rows 16 w + g (+ 8), columns
// 4 t .. 4 t + 3 (+ 16) of each K step, as WgFragA64x32e4m3 says.
__global__ void __launch_bounds__(sm90::kWarpgroupThreads)
    wgmma_e4m3_rs_kernel(const uint8_t* a, const uint8_t* b, int k, float* d) {
  __shared__ alignas(128) uint8_t sb[16 * kMaxK];
  const int tid = static_cast<int>(threadIdx.x);
  const sm90::KMajorLayout8 layout{k};
  for (int i = tid; i < 16 * kMaxK; i += sm90::kWarpgroupThreads) sb[i] = 0x7F;  // e4m3fn NaN
  __syncthreads();
  for (int i = tid; i < 16 * k; i += sm90::kWarpgroupThreads) sb[layout.offset_bytes(i / k, i % k)] = b[i];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int lane = tid % kWarpSize, warp = tid / kWarpSize;
  const int row = 16 * warp + lane / 4, col = 4 * (lane % 4);
  const auto quad = [&](int r, int c) {
    return static_cast<uint32_t>(a[r * k + c]) | (static_cast<uint32_t>(a[r * k + c + 1]) << 8) |
           (static_cast<uint32_t>(a[r * k + c + 2]) << 16) | (static_cast<uint32_t>(a[r * k + c + 3]) << 24);
  };
  sm90::WgTileC64x16 acc;
  for (float& x : acc.x) x = 0.0f;
  for (int k0 = 0; k0 < k; k0 += sm90::kWgK32) {
    sm90::WgFragA64x32e4m3 frag;
    frag.x[0] = quad(row, k0 + col);
    frag.x[1] = quad(row + 8, k0 + col);
    frag.x[2] = quad(row, k0 + col + 16);
    frag.x[3] = quad(row + 8, k0 + col + 16);
    sm90::wgmma_fence_operand(acc);
    sm90::wgmma_fence();
    const uint64_t db = sm90::smem_descriptor(sb + layout.offset_bytes(0, k0), layout.leading_bytes(),
                                              layout.stride_bytes());
    sm90::wgmma_m64n16k32_e4m3_rs(acc, frag, db, k0 > 0);
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    sm90::wgmma_fence_fragment(frag);
    sm90::wgmma_fence_operand(acc);
  }
  for (int l = 0; l < sm90::WgTileC64x16::ne; ++l)
    d[sm90::WgTileC64x16::get_i(l) * 16 + sm90::WgTileC64x16::get_j(l)] = acc.x[l];
}

constexpr int kTileRows = 64, kHeads = 16, kDims = 576, kVDims = 512;
constexpr int kQBytes = (kHeads / sm90::kCoreRows) * sm90::DecodeTileLayout::kGroupBytes;
constexpr int kPBytes = kHeads * kTileRows * 2;
constexpr int kTileBytes = (kTileRows / sm90::kCoreRows) * sm90::DecodeTileLayout::kGroupBytes;
constexpr int kDecodeTileShared = kTileBytes + kQBytes + kPBytes;  // 94 KB: dynamic, opted in

__device__ __forceinline__ void copy_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src));
}

template <sm90::WgOperand T>
__global__ void __launch_bounds__(sm90::kWarpgroupThreads)
    decode_tile_kernel(const uint16_t* kv, const uint16_t* q, const uint16_t* p, float* st, float* ot) {
  extern __shared__ uint4 shared_words[];  // 16-byte aligned, as the descriptors need
  auto* smem = reinterpret_cast<unsigned char*>(shared_words);
  unsigned char* tile = smem;
  unsigned char* sq = smem + kTileBytes;
  unsigned char* sp = sq + kQBytes;
  const int t = static_cast<int>(threadIdx.x);
  for (int i = t; i < kDecodeTileShared / 2; i += sm90::kWarpgroupThreads)
    reinterpret_cast<uint16_t*>(smem)[i] = 0x7FC0;  // NaN: a byte no copy wrote shows
  __syncthreads();
  // 16-byte chunks: 8 consecutive threads write one core matrix (8 rows of one chunk).
  using L = sm90::DecodeTileLayout;
  for (int i = t; i < kTileRows * L::kChunks; i += sm90::kWarpgroupThreads) {
    const int row = (i / (8 * L::kChunks)) * 8 + i % 8, chunk = i / 8 % L::kChunks;
    copy_16(tile + L::chunk_offset_bytes(row, chunk), kv + row * kDims + chunk * 8);
  }
  for (int i = t; i < kHeads * L::kChunks; i += sm90::kWarpgroupThreads) {
    const int row = (i / (8 * L::kChunks)) * 8 + i % 8, chunk = i / 8 % L::kChunks;
    copy_16(sq + L::chunk_offset_bytes(row, chunk), q + row * kDims + chunk * 8);
  }
  const sm90::KMajorLayout p_layout{kTileRows};
  for (int i = t; i < kHeads * kTileRows / 8; i += sm90::kWarpgroupThreads) {
    const int row = i / (kTileRows / 8), chunk = i % (kTileRows / 8);
    copy_16(sp + p_layout.offset_bytes(row, chunk * 8), p + row * kTileRows + chunk * 8);
  }
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  sm90::WgTileC64x16 s;
  sm90::wgmma_fence();
  for (int k0 = 0; k0 < kDims; k0 += sm90::kWgK16)
    sm90::wgmma_m64n16k16<false, false, T>(
        s, sm90::smem_descriptor(tile + L::k_major_start(0, k0), L::kKMajorLeading, L::kKMajorStride),
        sm90::smem_descriptor(sq + L::k_major_start(0, k0), L::kKMajorLeading, L::kKMajorStride),
        k0 > 0);
  sm90::wgmma_commit();
  sm90::wgmma_wait<0>();
  for (int l = 0; l < sm90::WgTileC64x16::ne; ++l)
    st[sm90::WgTileC64x16::get_i(l) * kHeads + sm90::WgTileC64x16::get_j(l)] = s.x[l];

  for (int m0 = 0; m0 < kVDims; m0 += sm90::kWgM) {
    sm90::WgTileC64x16 o;
    sm90::wgmma_fence();
    for (int k0 = 0; k0 < kTileRows; k0 += sm90::kWgK16)
      sm90::wgmma_m64n16k16<true, false, T>(
          o, sm90::smem_descriptor(tile + L::mn_major_start(m0, k0), L::kMnMajorLeading, L::kMnMajorStride),
          sm90::smem_descriptor(sp + p_layout.offset_bytes(0, k0), p_layout.leading_bytes(),
                                p_layout.stride_bytes()),
          k0 > 0);
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    for (int l = 0; l < sm90::WgTileC64x16::ne; ++l)
      ot[(m0 + sm90::WgTileC64x16::get_i(l)) * kHeads + sm90::WgTileC64x16::get_j(l)] = o.x[l];
  }
}

template <sm90::WgOperand T>
std::vector<float> run_decode_tile(const std::vector<uint16_t>& kv, const std::vector<uint16_t>& q,
                                   const std::vector<uint16_t>& p) {
  const DeviceBuffer<uint16_t> dkv(kv), dq(q), dp(p);
  DeviceBuffer<float> out(kTileRows * kHeads + kVDims * kHeads);
  out.fill_bytes(0xFF);
  MLACHECK_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(&decode_tile_kernel<T>),
                                         hipFuncAttributeMaxDynamicSharedMemorySize,
                                         kDecodeTileShared));
  decode_tile_kernel<T><<<1, sm90::kWarpgroupThreads, kDecodeTileShared>>>(
      dkv.get(), dq.get(), dp.get(), out.get(), out.get() + kTileRows * kHeads);
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return out.download();
}

template <sm90::WgOperand T>
std::vector<float> run_rs(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int k) {
  const DeviceBuffer<uint16_t> da(a), db(b);
  DeviceBuffer<float> dd(64 * 16);
  dd.fill_bytes(0xFF);
  wgmma_rs_kernel<T><<<1, sm90::kWarpgroupThreads>>>(da.get(), db.get(), k, dd.get());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return dd.download();
}

}  // namespace

std::vector<float> device_wgmma_decode_tile(Wgmma16 type, const std::vector<uint16_t>& kv,
                                            const std::vector<uint16_t>& q,
                                            const std::vector<uint16_t>& p) {
  if (kv.size() != static_cast<std::size_t>(kTileRows * kDims) ||
      q.size() != static_cast<std::size_t>(kHeads * kDims) ||
      p.size() != static_cast<std::size_t>(kHeads * kTileRows))
    throw std::invalid_argument("wgmma decode tile check: kv 64 x 576, q 16 x 576, p 16 x 64");
  return type == Wgmma16::bf16 ? run_decode_tile<sm90::WgOperand::bf16>(kv, q, p)
                               : run_decode_tile<sm90::WgOperand::f16>(kv, q, p);
}

std::vector<float> device_wgmma_bf16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                                     int k) {
  if (k < 16 || k > kMaxK || k % 16 != 0 || a.size() != static_cast<std::size_t>(64 * k) ||
      b.size() != static_cast<std::size_t>(64 * k))
    throw std::invalid_argument("wgmma check: k = " + std::to_string(k) +
                                " (a multiple of 16 in 16 .. 128) and 64 x k operands");
  const DeviceBuffer<uint16_t> da(a), db(b);
  DeviceBuffer<float> dd(64 * 64);
  dd.fill_bytes(0xFF);
  wgmma_kernel<<<1, sm90::kWarpgroupThreads>>>(da.get(), db.get(), k, dd.get());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return dd.download();
}

std::vector<float> device_wgmma_rs(Wgmma16 type, const std::vector<uint16_t>& a,
                                   const std::vector<uint16_t>& b, int k) {
  if (k < 16 || k > kMaxK || k % 16 != 0 || a.size() != static_cast<std::size_t>(64 * k) ||
      b.size() != static_cast<std::size_t>(16 * k))
    throw std::invalid_argument("wgmma register-A check: k = " + std::to_string(k) +
                                " (a multiple of 16 in 16 .. 128), a 64 x k, b 16 x k");
  return type == Wgmma16::bf16 ? run_rs<sm90::WgOperand::bf16>(a, b, k)
                               : run_rs<sm90::WgOperand::f16>(a, b, k);
}

std::vector<float> device_wgmma_e4m3(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                     const std::vector<float>& c, int k) {
  if (k < 32 || k > kMaxK || k % 32 != 0 || a.size() != static_cast<std::size_t>(64 * k) ||
      b.size() != static_cast<std::size_t>(16 * k) || c.size() != 64u * 16u)
    throw std::invalid_argument("wgmma e4m3 check: k = " + std::to_string(k) +
                                " (a multiple of 32 in 32 .. 128), a 64 x k, b 16 x k, c 64 x 16");
  const DeviceBuffer<uint8_t> da(a), db(b);
  const DeviceBuffer<float> dc(c);
  DeviceBuffer<float> dd(64 * 16);
  dd.fill_bytes(0xFF);
  wgmma_e4m3_kernel<<<1, sm90::kWarpgroupThreads>>>(da.get(), db.get(), dc.get(), k, dd.get());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return dd.download();
}

std::vector<float> device_wgmma_e4m3_rs(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int k) {
  if (k < 32 || k > kMaxK || k % 32 != 0 || a.size() != static_cast<std::size_t>(64 * k) ||
      b.size() != static_cast<std::size_t>(16 * k))
    throw std::invalid_argument("wgmma e4m3 register-A check: k = " + std::to_string(k) +
                                " (a multiple of 32 in 32 .. 128), a 64 x k, b 16 x k");
  const DeviceBuffer<uint8_t> da(a), db(b);
  DeviceBuffer<float> dd(64 * 16);
  dd.fill_bytes(0xFF);
  wgmma_e4m3_rs_kernel<<<1, sm90::kWarpgroupThreads>>>(da.get(), db.get(), k, dd.get());
  MLACHECK_GPU_CHECK(hipGetLastError());
  MLACHECK_GPU_CHECK(hipDeviceSynchronize());
  return dd.download();
}

bool device_runs_sm90a() {
  hipDeviceProp_t prop{};
  MLACHECK_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  return prop.major == 9 && prop.minor == 0;
}

}  // namespace mlacheck::gpu
