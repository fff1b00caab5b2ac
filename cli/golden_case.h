#pragma once
// One golden case in memory: the inputs (generated or read from a file), the quantized caches,
// the exact output and the emulated output of each recipe, and how it is written (io/golden.h).
// Shared by `gen`, `ref` and the manifest check, so all three produce the same bytes.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cli/memory_budget.h"
#include "io/safetensors.h"
#include "io/shared_array.h"
#include "problem/batch.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "ref/case_spec.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"

namespace mlacheck::cli {

// A quantized cache of the case: the input file's own, held whole (then it is an input, a kernel
// engineer's quantization used as it is), or `derived` from kv by complete(): then only the scale
// is held, the emulation quantizes each row when it reads it and write_case a chunk of rows at a
// time, so a derived cache is never whole in memory (issue 11 item 6).
struct Fp8CacheData {
  bool derived = false;
  io::SharedArray<uint8_t> codes;  // [N, 576] e4m3fn, the file's; empty when derived
  float scale = 0.0f;
};
struct Mxfp4CacheData {
  bool derived = false;
  io::SharedArray<uint8_t> packed;  // [N, 288], the file's; empty when derived
  io::SharedArray<uint8_t> scales;  // [N, 18]
};

struct GoldenCase {
  problem::Batch batch;
  std::vector<uint16_t> q;   // [T, 16, 576] bf16 bits
  // [N, 576] bf16 bits: generated, or mapped from the input file (read_case), since it is GBs.
  io::SharedArray<uint16_t> kv;
  std::map<std::string, std::string> metadata;  // case description, carried into the output

  // Filled by complete(); caches an input file already had are kept as they were.
  std::optional<Fp8CacheData> fp8;
  std::optional<Mxfp4CacheData> mxfp4;
  std::optional<ref::ExactResult> exact;
  std::vector<std::pair<std::string, ref::EmulatedResult>> emulated;  // by recipe name
};

// The inputs of a generated case (ref::generate) with its description in the metadata.
GoldenCase generate_case(const ref::CaseSpec& spec);

// The inputs of a file: q, kv, qo_indptr, kv_indptr (+ kv_indices, page_size metadata) and any
// of kv_fp8(+scale), kv_mxfp4(+scale), out_exact(+lse) already there. Throws io::Error or
// problem::ProblemError naming the file and tensor for a wrong dtype or shape, an invalid batch
// layout, or NaN/Inf in q or in a cache row some request reads (poisoned unused rows are fine).
// `caches` says which quantized caches to read (a judging command needs only its recipe's).
struct CachesToRead {
  bool fp8 = true, mxfp4 = true;
};
GoldenCase read_case(const io::SafetensorsReader& file, CachesToRead caches = {});
// The first element, in (request, key, element) order, of a cache row some request reads that is
// not a value: a NaN/Inf bf16, an fp8 e4m3fn NaN code, an E8M0 NaN scale (0xFF, NUMERICS §5.7);
// nullopt when none. The requests are searched in parallel (OpenMP) and the first in that order
// wins: the same answer for any thread count.
struct CachePosition {
  int64_t request, key, row;
  int element;
};
std::optional<CachePosition> first_nonfinite_kv(const problem::Batch& b, std::span<const uint16_t> kv);
std::optional<CachePosition> first_fp8_nan(const problem::Batch& b, std::span<const uint8_t> codes);
std::optional<CachePosition> first_e8m0_nan(const problem::Batch& b, std::span<const uint8_t> scales);

// The sizes read_case will allocate, from the header alone (nothing is read): for the memory
// estimate before reading (memory_budget.h). Missing tensors count as empty; read_case reports them.
CaseSize case_size(const io::SafetensorsReader& file);
// The quantized caches the file holds, which read_case reads whole.
HeldCaches caches_in(const io::SafetensorsReader& file);
// The same for a case to generate; an upper bound for ragged lengths (every length <= kv_len).
CaseSize case_size(const ref::CaseSpec& spec);

// Fills in what is missing: both quantized caches (derived: their scales, nothing held), the
// exact output, and the emulated output of each recipe (each recipe's default split count).
// Progress on stderr for long work.
void complete(GoldenCase& c, std::span<const problem::Recipe> recipes);
// The recipe's emulated output (bf16 bits) that complete() made; std::logic_error when it did not.
std::span<const uint16_t> emulated_output(const GoldenCase& c, const problem::Recipe& recipe);
// The whole emulation of the recipe in the case (out, lse, row-sum rounding); throws like
// emulated_output.
const ref::EmulatedResult& emulated_result(const GoldenCase& c, const problem::Recipe& recipe);

// bf16 bits widened to float (exact): how every command turns a bf16 output into values.
std::vector<float> widen_bf16(std::span<const uint16_t> bf16);

// The case's cache in the recipe's KV format (spans into c; the recipe's quantized cache must be
// there, as after complete()): a derived cache is quantized on read (problem/kv_cache.h). The
// golden caches are e4m3fn and RNE MXFP4; a recipe of another variant reads the cache that
// variant's quantizer makes of the whole bf16 cache (ref/kv_caches.h), also on read.
problem::KvCache golden_cache(const GoldenCase& c, const problem::Recipe& r);

// Both arrays of the MXFP4 cache whole (a copy of the file's, or quantized from kv: 0.27x the kv
// bytes): for the one judging use that needs them stored (wrong_answers.cpp reads the codes with
// other block scales).
Mxfp4CacheData stored_mxfp4(const GoldenCase& c);

// One quantized cache tensor of the case ([N, 1, row]) as rows made on demand: copied from the
// file's, or quantized from kv when derived. What write_case writes and gen's manifest hashes, a
// chunk at a time (io::for_each_chunk). The producers keep views into c.
struct CacheTensor {
  std::string name;
  io::DType dtype;
  std::vector<int64_t> shape;
  std::size_t row_bytes;
  io::RowProducer rows;
};
// kv_fp8, kv_mxfp4 and kv_mxfp4_scale, those of the caches c has (the fp8 scale is c.fp8->scale).
std::vector<CacheTensor> cache_tensors(const GoldenCase& c);

// Writes every tensor of the case (io/golden.h schema) without copying the large ones whole.
void write_case(const GoldenCase& c, const std::filesystem::path& out);

// The case-list line (ref/case_list.h format) that regenerates `spec`.
std::string case_line(const ref::CaseSpec& spec);

// Recipes from a comma-separated list ("all" or empty = every recipe); unknown names throw.
std::vector<problem::Recipe> parse_recipes(const std::string& list);

}  // namespace mlacheck::cli
