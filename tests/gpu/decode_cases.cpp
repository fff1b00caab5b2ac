#include "tests/gpu/decode_cases.h"

#include <stdexcept>

namespace mlacheck::gpu::test {
namespace {

ref::CaseSpec spec(std::string name, int32_t batch, int32_t kv_len, uint64_t seed) {
  ref::CaseSpec s;
  s.name = std::move(name);
  s.batch = batch;
  s.kv_len = kv_len;
  s.seed = seed;
  return s;
}

}  // namespace

std::vector<ref::CaseSpec> decode_cases() {
  std::vector<ref::CaseSpec> out;
  // Two of the harness's 8 shapes and seeds (data/cases/default.txt); verify runs all 8.
  out.push_back(spec("bs4_kv1024", 4, 1024, 4217));
  out.push_back(spec("bs32_kv1024", 32, 1024, 5412));
  // Ragged lengths (0, 1, primes, kv_len): empty sequences, single keys, tails of splits.
  auto ragged = spec("ragged_bs24_kv700", 24, 700, 11);
  ragged.ragged = true;
  out.push_back(ragged);
  // Paged caches, pages shuffled through the page table, page sizes 1, 16, 64.
  for (const int page : {1, 16, 64}) {
    auto p = spec("paged_p" + std::to_string(page) + "_bs16_kv500", 16, 500, 20 + page);
    p.ragged = true;
    p.page_size = page;
    p.shuffle_pages = true;
    out.push_back(p);
  }
  // Speculative decoding: q_seq_len 2 and 4, causal, on ragged paged batches.
  auto q2 = spec("q2_ragged_p16_bs12_kv300", 12, 300, 31);
  q2.q_len = 2;
  q2.ragged = true;
  q2.page_size = 16;
  q2.shuffle_pages = true;
  out.push_back(q2);
  auto q4 = spec("q4_ragged_p64_bs12_kv300", 12, 300, 32);
  q4.q_len = 4;
  q4.ragged = true;
  q4.page_size = 64;
  q4.shuffle_pages = true;
  out.push_back(q4);
  // Every sequence empty: out 0, lse -inf, nothing read.
  out.push_back(spec("empty_bs3_kv0", 3, 0, 41));
  // Nearly one-hot attention (large logits): max tracking and rescaling across steps and splits.
  auto peaked = spec("peaked_bs4_kv2048", 4, 2048, 51);
  peaked.profile = ref::Profile::peaked;
  out.push_back(peaked);
  // Small cases for compute-sanitizer: ragged, paged, q_len 4, a partly used last page.
  auto tiny = spec("tiny_ragged_p16_q4_bs6_kv70", 6, 70, 61);
  tiny.ragged = true;
  tiny.q_len = 4;
  tiny.page_size = 16;
  tiny.shuffle_pages = true;
  out.push_back(tiny);
  out.push_back(spec("tiny_bs2_kv300", 2, 300, 62));
  return out;
}

PreparedCase::PreparedCase(const ref::CaseSpec& s)
    : inputs_(ref::generate(s)),
      exact_(ref::decode_exact(inputs_.batch, inputs_.q, inputs_.kv)),
      data_(check::data_scale(inputs_.q, inputs_.kv, inputs_.batch)),
      layout_(check::OutputLayout::from_batch(inputs_.batch)) {
  caches_ = std::make_unique<ref::KvCaches>(inputs_.kv, inputs_.batch.cache_rows());
}

const ref::EmulatedResult& PreparedCase::emulated(const problem::Recipe& r,
                                                  const problem::SplitPlan& plan) {
  const auto key = std::make_tuple(std::string(r.name), plan.num_splits, plan.chunk_keys,
                                   r.softmax_tile);
  auto it = emulated_.find(key);
  if (it == emulated_.end())
    it = emulated_
             .emplace(key, ref::decode_emulated(inputs_.batch, inputs_.q, cache_for(r), r, plan))
             .first;
  return it->second;
}

PreparedCase& prepared(const std::string& name) {
  static std::map<std::string, std::unique_ptr<PreparedCase>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    for (const ref::CaseSpec& s : decode_cases())
      if (s.name == name) it = cache.emplace(name, std::make_unique<PreparedCase>(s)).first;
    if (it == cache.end()) throw std::invalid_argument("no decode test case " + name);
  }
  return *it->second;
}

}  // namespace mlacheck::gpu::test
