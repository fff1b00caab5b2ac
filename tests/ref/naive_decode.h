#pragma once
// Independent implementations of the two decode modes for the tests, written apart from ref/ as
// plain loops over (request, query, head, key, dim): no blocking, no packing, no vectors. They
// share with ref/ only what defines the numbers: the quant/ codecs and bulk quantizers, the batch
// layout and detmath's e^x / log (the emulated mode's definition of b^x in float32).
#include <cstdint>
#include <span>
#include <vector>

#include "problem/batch.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"

namespace mlacheck::ref::test {

// decode_exact.h's formulas in long double (80-bit x87 on x86-64) with libm's expl/logl.
struct NaiveExact {
  std::vector<long double> out;  // [total_q, 16, 512]
  std::vector<long double> lse;  // [total_q, 16]
};
NaiveExact naive_exact(const problem::Batch& batch, std::span<const uint16_t> q,
                       std::span<const uint16_t> kv);

// decode_emulated.h's steps 1-5, literally, in float32: must equal decode_emulated bit for bit.
struct NaiveEmulated {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};
NaiveEmulated naive_emulated(const problem::Batch& batch, std::span<const uint16_t> q,
                             const problem::KvCache& cache, const problem::Recipe& recipe,
                             int num_splits, int chunk_keys = 0);

}  // namespace mlacheck::ref::test
