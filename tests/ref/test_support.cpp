#include "test_support.h"

#include <cstdlib>
#include <utility>

#include <omp.h>

#include "problem/shape.h"
#include "ref/random.h"

namespace mlacheck::ref::test {

std::vector<uint64_t> seeds() {
  if (const char* env = std::getenv("MLACHECK_TEST_SEED")) return {std::strtoull(env, nullptr, 0)};
  return {1, 4217, 0x9E3779B97F4A7C15ull};
}

std::string seed_trace(uint64_t seed) {
  return "seed = " + std::to_string(seed) + " (rerun with MLACHECK_TEST_SEED=" +
         std::to_string(seed) + ")";
}

void with_threads(int threads, const std::function<void()>& f) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  f();
  omp_set_num_threads(before);
}

CaseSpec small_case(int32_t batch, int32_t kv_len, uint64_t seed, Profile p) {
  CaseSpec c;
  c.batch = batch;
  c.kv_len = kv_len;
  c.seed = seed;
  c.profile = p;
  c.name = default_name(c);
  return c;
}

uint64_t fnv1a(std::span<const uint16_t> v) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint16_t x : v)
    for (int k = 0; k < 2; ++k) {
      h ^= (x >> (8 * k)) & 0xFF;
      h *= 0x100000001b3ull;
    }
  return h;
}

problem::Batch single_request(const problem::Batch& batch, int64_t b) {
  std::vector<int32_t> rows;
  for (int64_t t = 0; t < batch.kv_len(b); ++t) rows.push_back(static_cast<int32_t>(batch.kv_row(b, t)));
  return problem::Batch({0, batch.q_len(b)}, {0, batch.kv_len(b)}, std::move(rows), 1,
                        batch.cache_rows());
}

std::vector<uint16_t> q_rows(const problem::Batch& batch, std::span<const uint16_t> q, int64_t b) {
  constexpr int64_t kRow = problem::kNumHeads * problem::kQkDim;
  const auto first = q.begin() + batch.qo_indptr()[b] * kRow;
  return std::vector<uint16_t>(first, first + batch.q_len(b) * kRow);
}

Permuted permute_pages(const problem::Batch& batch, std::span<const uint16_t> kv, uint64_t seed) {
  const int64_t ps = batch.page_size();
  const int64_t pages = batch.cache_rows() / ps;
  std::vector<int32_t> pi(pages);
  for (int64_t p = 0; p < pages; ++p) pi[p] = static_cast<int32_t>(p);
  for (int64_t i = pages; i > 1; --i) std::swap(pi[i - 1], pi[random_u32(seed, 99, i) % i]);
  std::vector<uint16_t> moved(kv.size());
  for (int64_t p = 0; p < pages; ++p)
    std::copy(kv.begin() + p * ps * problem::kQkDim, kv.begin() + (p + 1) * ps * problem::kQkDim,
              moved.begin() + pi[p] * ps * problem::kQkDim);
  std::vector<int32_t> indices(batch.kv_indices().begin(), batch.kv_indices().end());
  for (int32_t& x : indices) x = pi[x];
  std::vector<int32_t> qo(batch.qo_indptr().begin(), batch.qo_indptr().end());
  std::vector<int32_t> kvp(batch.kv_indptr().begin(), batch.kv_indptr().end());
  return {problem::Batch(std::move(qo), std::move(kvp), std::move(indices), batch.page_size(),
                         batch.cache_rows()),
          std::move(moved)};
}

}  // namespace mlacheck::ref::test
