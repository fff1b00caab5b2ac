#pragma once
// The device-side arguments of one MLA decode call, FlashMLA csrc/params.h style: a plain struct of
// device pointers, each with its shape. Every strategy of the registry takes this struct; the batch
// layout is problem/batch.h's (CSR over requests, optionally paged). Plain C++: no runtime header.
//
// Shapes: B requests, T = qo_indptr[B] query rows, N cache rows, H = 16 heads, D = 576 (512 latent
// + 64 rope), DV = 512. bf16 and fp8 tensors hold bit patterns (uint16_t / uint8_t).
#include <cstddef>
#include <cstdint>

namespace mlacheck::gpu {

// A stream as the registry passes it: the runtime's hipStream_t (cudaStream_t on NVIDIA), opaque
// here so that plain C++ files need no runtime header. nullptr is the default stream.
using StreamHandle = void*;

struct DecodeParams {
  // --- batch layout (problem::Batch) ---
  int32_t num_requests = 0;              // B
  int32_t total_q = 0;                   // T
  const int32_t* qo_indptr = nullptr;    // [B+1] query rows of request b: qo_indptr[b] .. [b+1]-1
  const int32_t* kv_indptr = nullptr;    // [B+1] request b has kv_indptr[b+1] - kv_indptr[b] keys
  const int32_t* kv_indices = nullptr;   // [P] page table; nullptr: contiguous cache, key t of
                                         //   request b is row kv_indptr[b] + t
  const int64_t* page_indptr = nullptr;  // [B+1] first page-table entry of request b; nullptr
                                         //   exactly when kv_indices is (Batch::page_indptr())
  int32_t page_size = 1;                 // rows per page (1 when contiguous)
  int64_t cache_rows = 0;                // N
  // Host-side: the longest request's key count (Batch::kv_len's maximum). Strategies whose split
  // count depends on the batch (Tunables::split_rule) read it, since reading kv_indptr would need
  // a device-to-host copy and a synchronization.
  int64_t max_kv_len = 0;
  // Host-side: the batch's key count (Batch::total_kv), which sizes the persistent schedule's
  // work items.
  int64_t total_kv = 0;
  // Host-side: multiprocessors (SMs / CUs) of the device that runs the launch
  // (gpu/availability.h device_multiprocessors): split rules fill whole waves of them, the
  // persistent schedule starts one block on each. The emulation's plan must be made for the same
  // count (Strategy::emulated_plan).
  int32_t multiprocessors = 0;

  // --- inputs ---
  const uint16_t* q = nullptr;  // [T, H, D] bf16; quantized on the device when the recipe says so
  // The KV cache in the recipe's format; the pointers of the other formats may be nullptr.
  const uint16_t* kv_bf16 = nullptr;        // [N, D] bf16
  const uint8_t* kv_fp8 = nullptr;          // [N, D] fp8 codes, value = decode(code) * kv_fp8_scale
  float kv_fp8_scale = 1.0f;                // per-tensor scale of kv_fp8
  const uint8_t* kv_mxfp4 = nullptr;        // [N, D/2] E2M1 pairs, low nibble = even element
  const uint8_t* kv_mxfp4_scale = nullptr;  // [N, D/32] E8M0 block scales

  // --- outputs ---
  uint16_t* out = nullptr;  // [T, H, DV] bf16
  float* lse = nullptr;     // [T, H] natural log of each row's sum of exp(score); may be nullptr

  // --- scratch ---
  // Strategy::workspace_bytes() bytes, 256-byte aligned, given by the caller so that a launch
  // allocates nothing (and can be captured in a graph): quantized Q, split partials. Its contents
  // on entry do not matter.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // Split-K partials left in the workspace for the caller to read back (`mlacheck drift`): a
  // kernel that can merge its splits itself (the hopper family's clusters) leaves that to the merge
  // kernel instead. The outputs are the same bits either way.
  bool keep_partials = false;
  // The workspace already holds this batch's work list, made by an earlier launch of the same
  // strategy on the same batch layout (qo_indptr, kv_indptr, multiprocessors) and not overwritten
  // since: the launch skips the work-list kernel. So one decode step's layers share one plan, as
  // FlashMLA's get_mla_metadata and FlashInfer's plan() are made once per step (`mlacheck bench
  // --plan-once`). Balanced plans only: a chunked plan's list ends each call consumed (its item
  // counter), and the launch refuses it; plans without a work list ignore it. The caller vouches
  // for the layout: nothing on the device can tell a stale list.
  bool reuse_plan = false;
};

}  // namespace mlacheck::gpu
