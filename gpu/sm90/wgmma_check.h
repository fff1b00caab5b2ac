#pragma once
// Runtime builds for NVIDIA only: the device side of tests/gpu/wgmma_test.cpp (gpu/sm90/wgmma.h).
#include <cstdint>
#include <vector>

namespace mlacheck::gpu {

// D = A · Bᵀ by wgmma_bf16_m64n64k16 over K / 16 steps: a is 64 x k, b is 64 x k bf16 bits (row
// major, K contiguous), placed in shared memory in KMajorLayout by the kernel; returns D, 64 x 64
// float32, row major. k is a multiple of 16 in 16 .. 128.
std::vector<float> device_wgmma_bf16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                                     int k);

// Whether device 0 runs sm_90a code (compute capability 9.0: H100, H200).
bool device_runs_sm90a();

}  // namespace mlacheck::gpu
