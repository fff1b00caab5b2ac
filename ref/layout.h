#pragma once
// The batch layout of a generated case (problem/batch.h): CSR lengths, pages, page order.
//
// - Uniform: every request has kv_len keys. Ragged: lengths come from the list
//   {0, 1, small primes, primes near powers of two, page_size - 1, page_size, page_size + 1,
//   2·page_size ± 1, kv_len - 1, kv_len} (those <= kv_len); the first requests take each entry
//   once, in an order drawn from the seed, later ones draw entries at random.
// - The cache is paged when page_size > 1 or the pages are shuffled: request b owns
//   ceil(L_b / page_size) pages, numbered in request order, or in an order drawn from the seed
//   (a Fisher–Yates shuffle of all pages) when shuffle_pages is set. Otherwise the cache is
//   contiguous (row = kv_indptr[b] + t), the harness's layout.
// - qo_indptr = b · q_len.
// The logical key index of key t of request b is kv_indptr[b] + t whatever the page order; the
// generator draws values by logical index, so a shuffled case holds the same keys as the
// unshuffled one, only in other rows.
#include <cstdint>
#include <vector>

#include "problem/batch.h"
#include "ref/case_spec.h"

namespace mlacheck::ref {

std::vector<int32_t> ragged_lengths(int32_t batch, int32_t max_len, int32_t page_size,
                                    uint64_t seed);
// Throws problem::ProblemError for an impossible spec (negative sizes, q_len outside 1..4,
// page_size < 1, more than 2^31 - 1 keys).
problem::Batch make_batch(const CaseSpec& spec);

}  // namespace mlacheck::ref
