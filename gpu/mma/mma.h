#pragma once
// The tile / matrix-instruction layer of the fast kernels, in the shape of llama.cpp
// ggml/src/ggml-cuda/mma.cuh: one interface, one implementation per vendor, and the kernels
// (gpu/fast/) written once against it.
//
// A Tile<I, J, T> is an I x J matrix of T spread over the registers of one warp: ne = I*J /
// kWarpSize elements per lane, element l of a lane sits at row get_i(l), column get_j(l). Code
// that touches single elements (softmax rescaling, writing results) goes through get_i / get_j and
// never assumes a vendor's layout.
//
// Roles in D += A · Bᵀ (all row major, K contiguous, like mma.cuh's "B is J x K"):
//   A  kM x kK operand (M = 16 rows: the 16 query heads of MLA)
//   B  kN x kK operand (N = the product's columns: keys in Q·Kᵀ, value dims in P·V)
//   C  kM x kN float32 accumulator
// kN is 8 on NVIDIA (mma.sync m16n8kK) and 16 on AMD (MFMA 16x16xK); kK is 16 for 16-bit operands
// and 32 for e4m3. Kernels take the shapes from the constants below.
//
// What each implementation provides (namespace mlacheck::gpu::mma):
//   constants  kM, kN, kK16, kK8, kHasFp8Mma, kHasScaledMma
//   types      TileA16, TileB16 (bf16 / f16 bit patterns, two per 32-bit word), TileA8, TileB8
//              (e4m3 codes, four per word), TileC (float)
//   loads      load_a16 / load_b16 (from shared memory, rows of K-contiguous 16-bit values),
//              load_b16_trans (B from a K x N row-major array: V stored as [key][dim]),
//              load_a8 / load_b8 (e4m3 codes, rows of K-contiguous bytes)
//   products   mma_bf16, mma_f16, mma_e4m3 (where kHasFp8Mma), and on gfx950 mma_scaled_e2m1
//              (E2M1 operands with E8M0 block-32 scales; kHasScaledMma)
//   copies     async_copy_16 / async_commit / async_wait<N>: global -> shared 16-byte copies that
//              overlap compute (cp.async on NVIDIA; on AMD a plain register round trip, see there)
//   bulk       kHasBulkCopy (NVIDIA sm_90), bulk_barrier_init / bulk_barrier_expect / bulk_copy /
//              bulk_barrier_wait: one thread has the copy engine move whole rows into shared memory,
//              completed by a barrier's transaction count (cp.async.bulk + mbarrier), the readers
//              wait on the barrier's phase
// Shared-memory pointers passed to the loads must be 16-byte aligned at each row start; `stride`
// is in elements of the stored type.
#include "gpu/platform.h"

#if !defined(__CUDACC__) && !defined(__HIP__)
#error "gpu/mma/mma.h is device code: include it from .hip files only"
#endif

#if defined(MLACHECK_GPU_PLATFORM_AMD)
#include "gpu/mma/mma_amd.h"
#else
#include "gpu/mma/mma_nvidia.h"
#endif
