#pragma once
// Random decode cases for the property tests (RapidCheck, issue 12 item 2): batch 0..300, lengths
// 0..9000 with the boundary values weighted up, page sizes 1..128, shuffled pages, ragged or
// uniform layouts, q_len 1..4, every data profile, random seeds — shrunk towards the smallest
// failing case, which RapidCheck prints as the case-list line (ref/case_list.h) that
// `mlacheck gen --case-list FILE` and `mlacheck verify --case-list FILE` rerun.
//
// Size-weighted: a case of RapidCheck size s costs at most work_at_size_100 · (s / 100)^2 (work(),
// in query-key pairs; at least a few hundred, so that size 0 still has keys). With the default
// 100 cases of sizes 0..100 most cases are small and the run's cost is bounded; RC_PARAMS=
// "max_size=N" (N > 100) or MLACHECK_PROPERTY_WORK (property_work()) raises the cap for long runs.
#include <cstdint>
#include <cstddef>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "ref/case_spec.h"

namespace mlacheck::property {

// A generated case. RapidCheck shows it (the counterexample, after shrinking) as its case-list
// line, through showValue.
struct Case {
  ref::CaseSpec spec;
};
void showValue(const Case& c, std::ostream& os);

// The cap at size 0: a case may still hold a few keys (a cap of 0 would allow only empty batches).
inline constexpr int64_t kMinCaseWork = 256;

// What a property may ask of the generator.
struct CaseOptions {
  int64_t work_at_size_100 = 0;  // the cap on work() at size 100 (property_work())
  int32_t min_q_len = 1;         // e.g. 2 for a property about causal queries
  bool poison_unused = true;     // may set CaseSpec::poison_unused (NaN in rows no key uses)
};

// The cost of a spec to the references, in units of one query-key pair of the exact decode (a
// few microseconds on one core). Per request: q_len · (kv_len + 32) for the decodes (the 32: each
// query's merge of up to 32 split partials) plus its cache rows, ceil(kv_len / page) · page, which
// are generated and quantized whether a key uses them or not (about one pair's cost each). An
// upper bound for ragged batches (their lengths are <= kv_len).
int64_t work(const ref::CaseSpec& spec);

// MLACHECK_PROPERTY_WORK when set (a positive integer; anything else throws
// std::invalid_argument), else `default_work`.
int64_t property_work(int64_t default_work);

rc::Gen<Case> cases(const CaseOptions& options);

// One of `items` (not empty), inside a property or generator: an index that shrinks towards the
// first item, so put the simplest first (RapidCheck's elementOf does not shrink).
template <class T>
T pick(const std::vector<T>& items) {
  return items[*rc::gen::inRange<std::size_t>(0, items.size())];
}

}  // namespace mlacheck::property
