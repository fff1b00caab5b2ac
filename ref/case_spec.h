#pragma once
// One generated test case: shape, seed, data profile and layout options. The same CaseSpec gives
// the same bits on every machine and for any thread count (ref/random.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlacheck::ref {

// What the values look like (ref/generate.h describes each).
enum class Profile : uint8_t { harness, peaked, outliers, boundary };

struct CaseSpec {
  std::string name;         // for reports; default_name() when empty
  int32_t batch = 1;        // requests
  int32_t kv_len = 0;       // keys per request; the longest allowed length when ragged
  int32_t q_len = 1;        // queries per request, 1..4 (causal when > 1)
  uint64_t seed = 0;
  Profile profile = Profile::harness;
  // Layout options (ref/layout.h).
  bool ragged = false;          // lengths 0, 1, primes, page boundary ±1, kv_len (≤ kv_len)
  int32_t page_size = 1;        // > 1 makes the cache paged
  bool shuffle_pages = false;   // pages in a random order through the page table
  // Cache rows no request reads (the tail of a partly used page) hold bf16 NaN instead of 0, so
  // an out-of-bounds read shows. The golden's FP8 scale is taken over the rows read
  // (cli/golden_case.cpp complete()), so every recipe can use it.
  bool poison_unused = false;
};

std::string_view to_string(Profile);
std::optional<Profile> parse_profile(std::string_view);
// e.g. "bs4_kv1024_s4217" (+ "_peaked", "_q2", "_ragged", "_p16", "_shuffled" when set).
std::string default_name(const CaseSpec&);

}  // namespace mlacheck::ref
