#pragma once
// The cases of the GPU decode suite (tests/gpu/decode_test.cpp) and everything the CPU side
// computes for them once: inputs, the caches of every format, the exact output, the data scale,
// and the emulated output of each strategy's (recipe, split plan, softmax step, tensor-core orders) on
// first use.
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "check/data_scale.h"
#include "check/layout.h"
#include "gpu/registry.h"
#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"
#include "ref/case_spec.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"

namespace mlacheck::gpu::test {

// The quick tier (data/cases/quick.txt, cli/case_tier.h): one small case per kind of trouble. A
// name containing "tiny" marks the ones small enough for compute-sanitizer (scripts/device-check.sh
// filters on it).
const std::vector<ref::CaseSpec>& decode_cases();

class PreparedCase {
 public:
  explicit PreparedCase(const ref::CaseSpec& spec);
  const ref::Inputs& inputs() const { return inputs_; }
  problem::KvCache cache_for(const problem::Recipe& r) { return caches_->for_recipe(r); }
  const ref::ExactResult& exact() const { return exact_; }
  const check::DataScale& data() const { return data_; }
  const check::OutputLayout& layout() const { return layout_; }
  // What a strategy's output is judged against: its recipe emulated on its plan, with its kernel's
  // tensor-core orders (gpu/registry.h Strategy).
  const ref::EmulatedResult& emulated(const Strategy& s, const problem::SplitPlan& plan);

 private:
  ref::Inputs inputs_;
  std::unique_ptr<ref::KvCaches> caches_;
  ref::ExactResult exact_;
  check::DataScale data_;
  check::OutputLayout layout_;
  // (recipe as spelled, plan, softmax step, the two tensor-core orders)
  std::map<std::tuple<std::string, problem::SplitPlan, int, const int*, const int*>, ref::EmulatedResult> emulated_;
};

// The prepared case of that name (made on first use, kept for the rest of the process).
PreparedCase& prepared(const std::string& name);

// `body(spec, case, cache)` for each decode case that strategy `s` supports (its cache in the
// strategy's format), under a gtest trace naming the case and the strategy.
void for_each_supported_case(const Strategy& s,
                             const std::function<void(const ref::CaseSpec&, PreparedCase&, const problem::KvCache&)>& body);

}  // namespace mlacheck::gpu::test
