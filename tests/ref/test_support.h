#pragma once
// Helpers of the ref/ tests: seeds, thread counts, small generated cases, comparisons.
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "problem/batch.h"
#include "ref/case_spec.h"
#include "ref/generate.h"

namespace mlacheck::ref::test {

// Seeds for randomized tests, Eigen style: a few fixed ones, or the one in MLACHECK_TEST_SEED.
// Tests loop over them with SCOPED_TRACE(seed_trace(s)) so a failure prints its seed.
std::vector<uint64_t> seeds();
std::string seed_trace(uint64_t seed);

// Runs f with OpenMP limited to `threads` threads, then restores the previous limit.
void with_threads(int threads, const std::function<void()>& f);

CaseSpec small_case(int32_t batch, int32_t kv_len, uint64_t seed, Profile p = Profile::harness);

// Bitwise equality of two arrays; on failure the message names the first differing index.
template <class T>
::testing::AssertionResult same_bits(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "first difference at index " << i << ": " << a[i]
                                           << " vs " << b[i];
  return ::testing::AssertionSuccess();
}
template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return same_bits(std::span<const T>(a), std::span<const T>(b));
}

// FNV-1a 64 of the bytes: pins generated data in tests.
uint64_t fnv1a(std::span<const uint16_t> v);

// The batch of request b alone, reading the same cache rows (page_size 1, kv_indices = the
// request's rows), and its q rows.
problem::Batch single_request(const problem::Batch& batch, int64_t b);
std::vector<uint16_t> q_rows(const problem::Batch& batch, std::span<const uint16_t> q, int64_t b);

// A copy of a paged case with its pages moved by a seeded permutation π and the page table
// rewritten to match (cache page π(p) = old page p).
struct Permuted {
  problem::Batch batch;
  std::vector<uint16_t> kv;
};
Permuted permute_pages(const problem::Batch& batch, std::span<const uint16_t> kv, uint64_t seed);

}  // namespace mlacheck::ref::test
