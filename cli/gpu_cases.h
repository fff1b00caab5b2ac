#pragma once
// Cases for the GPU commands (`verify`, `bench`): which case list, which cases of it, and one
// generated case with the KV caches every recipe may read, made the way `gen` makes them (the
// harness's fp8 quantization of the whole cache, aiter's MXFP4 of each row).
#include <memory>
#include <string>
#include <vector>

#include "problem/kv_cache.h"
#include "problem/recipe.h"
#include "ref/case_spec.h"
#include "ref/generate.h"
#include "ref/kv_caches.h"

namespace mlacheck::cli {

// The cases of `list_path`, or only those named in `names` (in the list's order); an unknown name
// is an error, and so is an empty selection.
std::vector<ref::CaseSpec> select_cases(const std::string& list_path,
                                        const std::vector<std::string>& names);

// One generated case. Unused cache rows stay 0 on the host (poison_unused is turned off: the
// fp8 per-tensor scale must see the real rows only); the device copies are poisoned instead
// (gpu/device_problem.h).
class PreparedCase {
 public:
  explicit PreparedCase(const ref::CaseSpec& spec);
  const ref::CaseSpec& spec() const { return spec_; }
  const ref::Inputs& inputs() const { return inputs_; }
  // The cache in the recipe's format (quantized on first use; the view lives as long as this).
  problem::KvCache cache_for(const problem::Recipe& recipe) { return caches_->for_recipe(recipe); }

 private:
  ref::CaseSpec spec_;
  ref::Inputs inputs_;
  std::unique_ptr<ref::KvCaches> caches_;  // views into inputs_.kv
};

}  // namespace mlacheck::cli
