#include "ref/layout.h"

#include <algorithm>
#include <climits>
#include <utility>

#include <fmt/core.h>

#include "problem/error.h"
#include "problem/shape.h"
#include "ref/random.h"
#include "ref/streams.h"

namespace mlacheck::ref {
namespace {

// Lengths that catch off-by-one and tail bugs: empty, single key, primes (no power-of-two tile
// divides them), lengths around page and split boundaries.
std::vector<int32_t> interesting_lengths(int32_t max_len, int32_t page_size) {
  std::vector<int64_t> c = {0, 1, 2, 3, 5, 7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191};
  for (int64_t k : {1, 2})
    for (int64_t d : {-1, 0, 1}) c.push_back(k * page_size + d);
  c.push_back(static_cast<int64_t>(max_len) - 1);
  c.push_back(max_len);
  std::vector<int32_t> out;
  for (int64_t v : c)
    if (v >= 0 && v <= max_len) out.push_back(static_cast<int32_t>(v));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Fisher–Yates with Philox draws: draw i is word 0 of block `offset + i` of `stream`.
template <class T>
void shuffle(std::vector<T>& v, uint64_t seed, uint32_t stream, uint64_t offset) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const uint64_t j = random_u32(seed, stream, offset + i) % i;
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace

std::vector<int32_t> ragged_lengths(int32_t batch, int32_t max_len, int32_t page_size,
                                    uint64_t seed) {
  const std::vector<int32_t> pool = interesting_lengths(max_len, page_size);
  std::vector<std::size_t> order(pool.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  shuffle(order, seed, stream::kLengths, 0);
  // Draws for requests past the pool start at block 2^32 so they never reuse the shuffle's.
  constexpr uint64_t kLaterDraws = 1ull << 32;
  std::vector<int32_t> lengths(batch);
  for (int32_t b = 0; b < batch; ++b) {
    const std::size_t k = static_cast<std::size_t>(b) < pool.size()
                              ? order[b]
                              : random_u32(seed, stream::kLengths, kLaterDraws + b) % pool.size();
    lengths[b] = pool[k];
  }
  return lengths;
}

problem::Batch make_batch(const CaseSpec& spec) {
  if (spec.batch < 0 || spec.kv_len < 0)
    throw problem::ProblemError(
        fmt::format("case {}: batch {} and kv_len {} must be >= 0", spec.name, spec.batch, spec.kv_len));
  if (spec.q_len < 1 || spec.q_len > problem::kMaxQSeqLen)
    throw problem::ProblemError(fmt::format("case {}: q_len {} outside 1..{}", spec.name,
                                            spec.q_len, problem::kMaxQSeqLen));
  if (spec.page_size < 1)
    throw problem::ProblemError(fmt::format("case {}: page_size {} < 1", spec.name, spec.page_size));

  std::vector<int32_t> lengths =
      spec.ragged ? ragged_lengths(spec.batch, spec.kv_len, spec.page_size, spec.seed)
                  : std::vector<int32_t>(spec.batch, spec.kv_len);
  // Sizes and page counts in 64 bits: batch + 1 and length + page_size - 1 overflow int32 near 2^31.
  std::vector<int32_t> qo(static_cast<std::size_t>(spec.batch) + 1), kv(qo.size());
  int64_t total = 0, pages = 0;
  for (int32_t b = 0; b < spec.batch; ++b) {
    total += lengths[b];
    pages += (int64_t{lengths[b]} + spec.page_size - 1) / spec.page_size;
    const int64_t queries = (int64_t{b} + 1) * spec.q_len;
    if (total > INT32_MAX || queries > INT32_MAX)
      throw problem::ProblemError(fmt::format("case {}: more than 2^31 - 1 keys or queries", spec.name));
    kv[b + 1] = static_cast<int32_t>(total);
    qo[b + 1] = static_cast<int32_t>(queries);
  }
  if (spec.page_size == 1 && !spec.shuffle_pages)
    return problem::Batch(std::move(qo), std::move(kv), {}, 1, total);

  if (pages * spec.page_size > INT32_MAX)
    throw problem::ProblemError(fmt::format("case {}: more than 2^31 - 1 cache rows", spec.name));
  std::vector<int32_t> indices(pages);
  for (int64_t p = 0; p < pages; ++p) indices[p] = static_cast<int32_t>(p);
  if (spec.shuffle_pages) shuffle(indices, spec.seed, stream::kPages, 0);
  return problem::Batch(std::move(qo), std::move(kv), std::move(indices), spec.page_size,
                        pages * spec.page_size);
}

}  // namespace mlacheck::ref
