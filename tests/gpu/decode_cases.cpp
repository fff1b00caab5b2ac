#include "tests/gpu/decode_cases.h"

#include <stdexcept>

#include <gtest/gtest.h>


#include "ref/case_list.h"
#include "tests/support/test_data.h"

namespace mlacheck::gpu::test {

const std::vector<ref::CaseSpec>& decode_cases() {
  // Read once: gtest asks for the list while it registers the tests and again in each test.
  static const std::vector<ref::CaseSpec> cases =
      ref::read_case_list((testing::data_dir() / "cases" / "quick.txt").string());
  return cases;
}

PreparedCase::PreparedCase(const ref::CaseSpec& s)
    : inputs_(ref::generate(s)),
      exact_(ref::decode_exact(inputs_.batch, inputs_.q, inputs_.kv)),
      data_(check::data_scale(inputs_.q, inputs_.kv, inputs_.batch)),
      layout_(check::OutputLayout::from_batch(inputs_.batch)) {
  caches_ = std::make_unique<ref::KvCaches>(inputs_.kv, inputs_.batch.cache_rows());
}

const ref::EmulatedResult& PreparedCase::emulated(const Strategy& s, const problem::SplitPlan& plan) {
  const problem::Recipe& r = s.recipe;
  const auto key = std::make_tuple(problem::spell(r), plan, r.softmax_tile, s.tc_qk_order.data(),
                                   s.tc_pv_order.data());
  auto it = emulated_.find(key);
  if (it == emulated_.end()) {
    ref::EmulationOptions o;
    o.tc_qk_order = s.tc_qk_order;
    o.tc_pv_order = s.tc_pv_order;
    it = emulated_.emplace(key, ref::decode_emulated(inputs_.batch, inputs_.q, cache_for(r), r, plan, o)).first;
  }
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

void for_each_supported_case(const Strategy& s,
                             const std::function<void(const ref::CaseSpec&, PreparedCase&, const problem::KvCache&)>& body) {
  for (const ref::CaseSpec& spec : decode_cases()) {
    SCOPED_TRACE(spec.name + ", " + s.name);
    PreparedCase& c = prepared(spec.name);
    const problem::KvCache cache = c.cache_for(s.recipe);
    if (s.supports(c.inputs().batch, cache)) continue;
    body(spec, c, cache);
  }
}

}  // namespace mlacheck::gpu::test
