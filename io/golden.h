#pragma once
// The golden-file schema (DESIGN.md "Golden files"): one safetensors file per case, readable from
// PyTorch / NumPy with no code of ours. Tensor names and shapes (T = total queries, N = cache rows,
// B = requests, P = page-table entries):
//
//   q                BF16     [T, 16, 576]   queries
//   kv               BF16     [N, 1, 576]    the cache as generated (source of every other format)
//   qo_indptr        I32      [B+1]          CSR over queries
//   kv_indptr        I32      [B+1]          CSR over keys (problem/batch.h)
//   kv_indices       I32      [P]            page table; only in paged cases
//   kv_fp8           F8_E4M3  [N, 1, 576]    the harness's quantize_fp8 of kv (e4m3fn), its scale
//                                            taken over the rows the batch reads (unread rows: 0)
//   kv_fp8_scale     F32      [1]
//   kv_mxfp4         U8       [N, 1, 288]    aiter dynamic_mxfp4_quant codes, low nibble = even element
//   kv_mxfp4_scale   F8_E8M0  [N, 1, 18]
//   out_exact        F32      [T, 16, 512]   fp64 reference rounded to float32
//   lse_exact        F32      [T, 16]        natural log; -inf for a query that sees no key
//   out_<recipe>     BF16     [T, 16, 512]   the recipe's emulated output, e.g. out_a8w8
//   lse_<recipe>     F32      [T, 16]
//
// __metadata__ holds the keys below; page_size is there (a scalar, not a tensor).
//
// Kernel intermediates: what a kernel's OUTPUT file (judged by compare / drift, not a golden file)
// may hold beside its output, so that `mlacheck drift` can tell which stage went wrong. From
// Python: safetensors.torch.save_file({"out": out, "lse": lse, "partial_out": po,
// "partial_lse": pl}, path) (NumPy: safetensors.numpy.save_file after `import ml_dtypes`).
//   out            BF16/F16/F32  [T, 16, 512]     the output (any name, --tensor)
//   lse            F32           [T, 16]          natural log; -inf where a query sees no key
//   partial_out    F32/BF16      [T, S, 16, 512]  each split's normalized output, splits in key
//                                                 order; 0 for splits a query does not reach
//   partial_lse    F32           [T, S, 16]       each split's LSE (natural log); -inf when empty
//   q_fp8          U8/F8_E4M3    [T, 16, 576]     the kernel's fp8 Q codes (e4m3fn)
//   q_scale        F32           [1]              their per-tensor scale (fp8-harness / dynamic /
//                                                 static recipes)
//   q_mxfp4        U8            [T, 16, 288]     MXFP4 Q codes, low nibble = even element
//   q_mxfp4_scale  U8/F8_E8M0    [T, 16, 18]      their E8M0 block scales
#include <string>
#include <string_view>

namespace mlacheck::io::golden {

// Bumped whenever a tensor's name, dtype, shape or meaning changes.
inline constexpr std::string_view kSchema = "mlacheck-golden/1";

namespace tensor {
inline constexpr std::string_view q = "q";
inline constexpr std::string_view kv = "kv";
inline constexpr std::string_view qo_indptr = "qo_indptr";
inline constexpr std::string_view kv_indptr = "kv_indptr";
inline constexpr std::string_view kv_indices = "kv_indices";
inline constexpr std::string_view kv_fp8 = "kv_fp8";
inline constexpr std::string_view kv_fp8_scale = "kv_fp8_scale";
inline constexpr std::string_view kv_mxfp4 = "kv_mxfp4";
inline constexpr std::string_view kv_mxfp4_scale = "kv_mxfp4_scale";
inline constexpr std::string_view out_exact = "out_exact";
inline constexpr std::string_view lse_exact = "lse_exact";
}  // namespace tensor

inline std::string out_name(std::string_view recipe) { return "out_" + std::string(recipe); }
inline std::string lse_name(std::string_view recipe) { return "lse_" + std::string(recipe); }

namespace intermediate {
inline constexpr std::string_view lse = "lse";
inline constexpr std::string_view partial_out = "partial_out";
inline constexpr std::string_view partial_lse = "partial_lse";
inline constexpr std::string_view q_fp8 = "q_fp8";
inline constexpr std::string_view q_scale = "q_scale";
inline constexpr std::string_view q_mxfp4 = "q_mxfp4";
inline constexpr std::string_view q_mxfp4_scale = "q_mxfp4_scale";
}  // namespace intermediate

namespace meta {
inline constexpr std::string_view schema = "schema";        // kSchema
inline constexpr std::string_view generator = "generator";  // mlacheck version string
inline constexpr std::string_view case_spec = "case";       // the case-list line that regenerates it
inline constexpr std::string_view seed = "seed";
inline constexpr std::string_view profile = "profile";
inline constexpr std::string_view batch = "batch";
inline constexpr std::string_view kv_len = "kv_len";
inline constexpr std::string_view q_len = "q_len";
inline constexpr std::string_view page_size = "page_size";
inline constexpr std::string_view recipes = "recipes";      // comma-separated, those with out_<r>
// The schedule each out_<r> was emulated with, "name:splits:softmax_tile" comma-separated: a kernel
// compared with out_<r> should run the same split count (P is rounded against each split's max).
inline constexpr std::string_view recipe_schedules = "recipe_schedules";
inline constexpr std::string_view fp8_format = "fp8_format";            // of kv_fp8
inline constexpr std::string_view mxfp4_rounding = "mxfp4_rounding";    // of kv_mxfp4
}  // namespace meta

}  // namespace mlacheck::io::golden
