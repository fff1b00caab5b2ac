// sm_90a only (gpu/CMakeLists.txt: mlacheck_gpu_sm90a): the warpgroup product of gpu/sm90/wgmma.h
// on the device, for tests/gpu/wgmma_test.cpp. One warpgroup: the operands are copied into shared
// memory in the no-swizzle K-major layout (poisoned first), K / 16 products accumulate into one
// 64 x 64 tile, each thread writes its fragment back by get_i / get_j.
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

}  // namespace

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

bool device_runs_sm90a() {
  hipDeviceProp_t prop{};
  MLACHECK_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  return prop.major == 9 && prop.minor == 0;
}

}  // namespace mlacheck::gpu
