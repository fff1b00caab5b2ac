#pragma once
// NVIDIA builds for sm_90a only (MLACHECK_HAVE_SM90A): the device side of tests/gpu/wgmma_test.cpp (gpu/sm90/wgmma.h).
#include <cstdint>
#include <vector>

namespace mlacheck::gpu {

// D = A · Bᵀ by wgmma_bf16_m64n64k16 over K / 16 steps: a is 64 x k, b is 64 x k bf16 bits (row
// major, K contiguous), placed in shared memory in KMajorLayout by the kernel; returns D, 64 x 64
// float32, row major. k is a multiple of 16 in 16 .. 128.
std::vector<float> device_wgmma_bf16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                                     int k);

// The 16-bit operand type of the checked products (sm90::WgOperand on the device side): the
// operand bits are bf16 or f16 patterns.
enum class Wgmma16 { bf16, f16 };

// D = A · Bᵀ by wgmma_m64n16k16_rs<type> over K / 16 steps, A from registers (each thread loads
// its WgFragA64x16 from a), B in shared memory (KMajorLayout): a is 64 x k, b is 16 x k 16-bit
// patterns of `type` (row major); returns D, 64 x 16 float32, row major. k is a multiple of 16 in
// 16 .. 128.
std::vector<float> device_wgmma_rs(Wgmma16 type, const std::vector<uint16_t>& a,
                                   const std::vector<uint16_t>& b, int k);

// One decode tile through both products as the Hopper family runs them (gpu/sm90/wgmma.h
// DecodeTileLayout), with operands of `type`: kv (64 rows x 576 16-bit patterns) is gathered by
// 16-byte cp.async copies into the shared tile, q (16 x 576) and p (16 x 64) into K-major
// operands; then Sᵀ = K Qᵀ (64 x 16, 36 K-major steps of m64n16k16) and Oᵀ = Vᵀ Pᵀ (512 x 16: 8
// chunks of 64 dims x 4 transposed-A steps over the 64 keys). Returns Sᵀ then Oᵀ, row major
// (64 x 16 + 512 x 16 floats).
std::vector<float> device_wgmma_decode_tile(Wgmma16 type, const std::vector<uint16_t>& kv,
                                            const std::vector<uint16_t>& q,
                                            const std::vector<uint16_t>& p);

// D = C + A · Bᵀ by wgmma_m64n16k32_e4m3 over K / 32 steps, both operands in shared memory
// (KMajorLayout8): a is 64 x k, b is 16 x k e4m3fn codes (row major, K contiguous), c 64 x 16 float32
// (the accumulator's start, row major); returns D, 64 x 16 float32, row major. k is a multiple of 32
// in 32 .. 128.
std::vector<float> device_wgmma_e4m3(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                     const std::vector<float>& c, int k);

// D = A · Bᵀ by wgmma_m64n16k32_e4m3_rs over K / 32 steps, A from registers (each thread loads its
// WgFragA64x32e4m3 from a), B in shared memory (KMajorLayout8): a is 64 x k, b 16 x k e4m3fn codes
// (row major); returns D, 64 x 16 float32, row major. k is a multiple of 32 in 32 .. 128.
std::vector<float> device_wgmma_e4m3_rs(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int k);

// Whether device 0 runs sm_90a code (compute capability 9.0: H100, H200).
bool device_runs_sm90a();

}  // namespace mlacheck::gpu
