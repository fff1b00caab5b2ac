#pragma once
// Harness-like test data for the gate, made without the reference (tests of check/ must not need
// ref/): q and kv ~ randn * 0.02 rounded to bf16 (NUMERICS §6.3), and a plausible "exact" output,
// each (token, head) row a softmax-weighted mean of its request's V rows with weights of the
// harness's spread (scores ~1e-2, so nearly uniform): outputs ~1e-4 .. 2e-3 like the harness's.
#include <cstdint>
#include <vector>

#include "check/data_scale.h"
#include "check/layout.h"
#include "problem/batch.h"

namespace mlacheck::check::testing {

struct HarnessLike {
  problem::Batch batch;
  std::vector<uint16_t> q, kv;  // bf16 bits [T, 16, 576], [N, 576]
  std::vector<float> exact;     // [T, 16, 512]
  OutputLayout layout;
  DataScale data;
};

// `batch` requests of one query and kv_len keys each; deterministic for a seed.
HarnessLike harness_like(int32_t batch, int32_t kv_len, uint32_t seed);

// bf16 bits of each value (what a kernel writing bf16 would store).
std::vector<uint16_t> to_bf16(const std::vector<float>& x);
// bf16 bits widened back to float.
std::vector<float> widen(const std::vector<uint16_t>& bits);

}  // namespace mlacheck::check::testing
