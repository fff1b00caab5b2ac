#include "tests/property/case_gen.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/golden_case.h"
#include "problem/shape.h"
#include "ref/layout.h"

namespace mlacheck::property {
namespace {

// Issue 12's ranges.
constexpr int32_t kMaxBatch = 300;
constexpr int32_t kMaxKvLen = 9000;
constexpr int32_t kMaxPageSize = 128;
// What the references spend per query beyond its keys, in units of one query-key pair: the
// emulation merges one partial row per split, and the recipes' default split count is up to 32
// (problem/recipe.cpp).
constexpr int64_t kQueryOverhead = 32;

// Lengths where kernels change behaviour, each with its neighbours: the softmax tiles of the
// recipes (32, 64) and GPU key tiles, page sizes up to 128, and the powers of two that split
// lengths L / S and chunks fall on, up to the harness's 8192; 0, 1 and a few primes for empty,
// single-key and odd requests. The boundaries of the case's own page size P (P ± 1, 2P ± 1) are
// added per case (cases()); ragged layouts add theirs, kv_len - 1 among them (ref/layout.h).
const std::vector<int32_t>& boundary_lengths() {
  static const std::vector<int32_t> v = [] {
    std::vector<int32_t> out{0, 1, 2, 3, 5, 7, 13, 97};
    for (int32_t p = 16; p <= 8192; p *= 2)
      for (int32_t d : {-1, 0, 1}) out.push_back(p + d);
    out.push_back(kMaxKvLen);
    return out;
  }();
  return v;
}

int64_t request_work(const ref::CaseSpec& s) {
  const int64_t rows = (static_cast<int64_t>(s.kv_len) + s.page_size - 1) / s.page_size * s.page_size;
  return static_cast<int64_t>(s.q_len) * (s.kv_len + kQueryOverhead) + rows;
}

}  // namespace

void showValue(const Case& c, std::ostream& os) {
  os << cli::case_line(c.spec)
     << "\n  (a case-list line, ref/case_list.h: put it in a file and rerun it with"
        " `mlacheck gen --case-list FILE` or `mlacheck verify --case-list FILE`)";
}

int64_t work(const ref::CaseSpec& s) { return s.batch * request_work(s); }

int64_t property_work(int64_t default_work) {
  const char* env = std::getenv("MLACHECK_PROPERTY_WORK");
  if (env == nullptr || *env == '\0') return default_work;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  if (*end != '\0' || v <= 0)
    throw std::invalid_argument(std::string("MLACHECK_PROPERTY_WORK='") + env +
                                "': must be a positive number of query-key pairs");
  return v;
}

rc::Gen<Case> cases(const CaseOptions& options) {
  return rc::gen::withSize([options](int size) {
    const int64_t cap = std::max<int64_t>(
        kMinCaseWork, static_cast<int64_t>(static_cast<double>(options.work_at_size_100) *
                                       (size / 100.0) * (size / 100.0)));
    return rc::gen::exec([options, cap] {
      ref::CaseSpec s;
      // Picked in the order shrinking should simplify them, the features first, then the sizes;
      // every choice is an integer that shrinks towards the simplest option (RapidCheck's
      // element / elementOf / weightedOneOf do not shrink), weights by repeated options.
      s.profile = pick(std::vector<ref::Profile>{ref::Profile::harness, ref::Profile::peaked,
                                                 ref::Profile::outliers, ref::Profile::boundary});
      s.q_len = *rc::gen::inRange<int32_t>(options.min_q_len, problem::kMaxQSeqLen + 1);
      s.ragged = *rc::gen::arbitrary<bool>();
      // 3 in 7 page size 1, 2 in 7 a common size, 2 in 7 any size.
      const int page_kind = *rc::gen::inRange(0, 7);
      s.page_size = page_kind < 3   ? 1
                    : page_kind < 5 ? pick(std::vector<int32_t>{2, 16, 32, 64, kMaxPageSize})
                                    : *rc::gen::inRange<int32_t>(1, kMaxPageSize + 1);
      s.shuffle_pages = *rc::gen::arbitrary<bool>();
      s.poison_unused = options.poison_unused && *rc::gen::arbitrary<bool>();

      // The longest request a case of this cap can afford (request_work of a batch of one); then
      // 2 in 3 a boundary length (shrinking towards the shortest), 1 in 3 any length.
      const auto kv_max = static_cast<int32_t>(std::clamp<int64_t>(
          (cap - s.page_size - s.q_len * kQueryOverhead) / (s.q_len + 1), 0, kMaxKvLen));
      std::vector<int32_t> boundaries;
      for (int32_t v : boundary_lengths())
        if (v <= kv_max) boundaries.push_back(v);
      for (int32_t v : {s.page_size - 1, s.page_size + 1, 2 * s.page_size - 1, 2 * s.page_size + 1})
        if (v >= 0 && v <= kv_max) boundaries.push_back(v);
      std::sort(boundaries.begin(), boundaries.end());
      boundaries.erase(std::unique(boundaries.begin(), boundaries.end()), boundaries.end());
      s.kv_len = *rc::gen::inRange(0, 3) < 2 ? pick(boundaries) : *rc::gen::inRange<int32_t>(0, kv_max + 1);

      // 1 in 10 no request, 2 in 10 one, 7 in 10 any count the cap allows.
      const auto batch_max = static_cast<int32_t>(std::clamp<int64_t>(cap / request_work(s), 1, kMaxBatch));
      const int batch_kind = *rc::gen::inRange(0, 10);
      s.batch = batch_kind == 0 ? 0 : batch_kind < 3 ? 1 : *rc::gen::inRange<int32_t>(1, batch_max + 1);
      s.seed = *rc::gen::arbitrary<uint64_t>();
      s.name = ref::default_name(s);
      return Case{s};
    });
  });
}

}  // namespace mlacheck::property
