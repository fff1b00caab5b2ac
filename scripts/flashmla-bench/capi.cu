// A C interface to FlashMLA's dense bf16 decode on sm_90a (deepseek-ai/FlashMLA's csrc: the
// scheduling-metadata kernel, the split-KV kernel and the combine kernel), so that a Python script
// on the GPU machine can time it beside mlacheck's kernels through ctypes, without building a torch
// extension (whose ABI would have to match that machine's torch and Python). The parameters are
// FlashMLA's own (csrc/params.h), filled as its csrc/api/dense_decode.h fills them for MLA: one
// KV head, 16 query heads, head dims 576 / 512, pages of 64 keys, contiguous q [b, s_q, 16, 576],
// out [b, s_q, 16, 512], lse [b, 16, s_q]. Built by build.sh against a FlashMLA checkout.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "params.h"
#include "sm90/decode/dense/splitkv_mla.h"
#include "smxx/decode/combine/combine.h"
#include "smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.h"

namespace {
constexpr int kHeadsQ = 16, kHeadDimK = 576, kHeadDimV = 512, kPageSize = 64;
// dense_decode.h's fixed_overhead_num_blocks argument of the scheduling metadata.
constexpr int kFixedOverheadBlocks = 5;
}  // namespace

extern "C" {

// dense_decode.h's num_sm_parts for one KV head.
int fmla_num_sm_parts(int num_sms, int s_q) {
  const int q_seq_per_hk = s_q * kHeadsQ;
  return std::max(num_sms / ((q_seq_per_hk + 63) / 64), 1);
}

// Ints of one DecodingSchedMeta (the metadata tensor is [num_sm_parts, this]).
int fmla_sched_meta_ints() { return static_cast<int>(sizeof(DecodingSchedMeta) / sizeof(int)); }

// The scheduling metadata (FlashMLA's get_mla_metadata): tile_meta [num_sm_parts, sched_meta_ints],
// num_splits [b + 1]. Returns the CUDA error of the launch.
int fmla_plan(int b, int s_q, int* seqlens_k, int* tile_meta, int* num_splits, int num_sm_parts, void* stream) {
  GetDecodeSchedMetaParams p = {b, s_q, kPageSize, kFixedOverheadBlocks, -1, -1, nullptr, nullptr, seqlens_k,
                                reinterpret_cast<DecodingSchedMeta*>(tile_meta), num_splits, num_sm_parts,
                                static_cast<cudaStream_t>(stream)};
  smxx::decode::run_get_decoding_sched_meta_kernel(p);
  return static_cast<int>(cudaGetLastError());
}

// One decode call: the split-KV kernel and the combine kernel. q: bf16 [b, s_q, 16, 576];
// kcache: bf16 [num_blocks, 64, 1, 576]; block_table: int [b, max_blocks_per_seq]; lse_accum:
// float [b + num_sm_parts, 16 s_q]; o_accum: float [b + num_sm_parts, 16 s_q, 512]; out: bf16
// [b, s_q, 16, 512]; lse: float [b, 16 s_q]. Causal masking for s_q > 1, as FlashMLA's API sets it.
int fmla_decode(int b, int s_q, void* q, void* kcache, int num_blocks, int* block_table, int max_blocks_per_seq,
                int* seqlens_k, float softmax_scale, int* tile_meta, int* num_splits, int num_sm_parts,
                float* lse_accum, float* o_accum, void* out, float* lse, void* stream) {
  const int q_seq_per_hk = s_q * kHeadsQ;
  DenseAttnDecodeParams p{};
  p.b = b;
  p.s_q = s_q;
  p.q_seq_per_hk = q_seq_per_hk;
  p.seqlens_k_ptr = seqlens_k;
  p.h_q = kHeadsQ;
  p.h_k = 1;
  p.num_blocks = num_blocks;
  p.q_head_per_hk = kHeadsQ;
  p.is_causal = s_q > 1;
  p.d = kHeadDimK;
  p.d_v = kHeadDimV;
  p.scale_softmax = softmax_scale;
  p.scale_softmax_log2 = static_cast<float>(softmax_scale * 1.4426950408889634);  // M_LOG2E
  p.q_ptr = q;
  p.k_ptr = kcache;
  p.o_ptr = out;
  p.softmax_lse_ptr = lse;
  // Strides in elements, as dense_decode.h takes them from its reshaped views: q [b, q_seq_per_hk,
  // 1, 576], kcache [num_blocks, 64, 1, 576], out [b, 1, q_seq_per_hk, 512].
  p.q_batch_stride = static_cast<int64_t>(q_seq_per_hk) * kHeadDimK;
  p.q_row_stride = kHeadDimK;
  p.q_head_stride = kHeadDimK;
  p.k_batch_stride = static_cast<int64_t>(kPageSize) * kHeadDimK;
  p.k_row_stride = kHeadDimK;
  p.k_head_stride = kHeadDimK;
  p.o_batch_stride = static_cast<int64_t>(q_seq_per_hk) * kHeadDimV;
  p.o_row_stride = kHeadDimV;
  p.o_head_stride = static_cast<int64_t>(q_seq_per_hk) * kHeadDimV;
  p.block_table = block_table;
  p.block_table_batch_stride = max_blocks_per_seq;
  p.page_block_size = kPageSize;
  p.tile_scheduler_metadata_ptr = reinterpret_cast<DecodingSchedMeta*>(tile_meta);
  p.num_sm_parts = num_sm_parts;
  p.num_splits_ptr = num_splits;
  p.total_num_splits = b + num_sm_parts;
  p.softmax_lseaccum_ptr = lse_accum;
  p.oaccum_ptr = o_accum;
  p.stream = static_cast<cudaStream_t>(stream);
  sm90::run_flash_splitkv_mla_kernel<cutlass::bfloat16_t>(p);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return static_cast<int>(e);

  CombineParams c = {b, s_q, kHeadsQ, kHeadDimV,
                     lse, out,
                     q_seq_per_hk, kHeadsQ,
                     kHeadsQ * s_q * kHeadDimV, kHeadsQ * kHeadDimV, kHeadDimV,
                     lse_accum, o_accum,
                     q_seq_per_hk, kHeadsQ,
                     kHeadsQ * s_q * kHeadDimV, kHeadsQ * kHeadDimV, kHeadDimV,
                     reinterpret_cast<DecodingSchedMeta*>(tile_meta), num_splits, num_sm_parts,
                     nullptr,
                     static_cast<cudaStream_t>(stream)};
  smxx::decode::run_flash_mla_combine_kernel<cutlass::bfloat16_t>(c);
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
