#pragma once
// `mlacheck verify --mutants`: the suite measures its own power on the real kernels (issue 12).
// For each (case, strategy) row that passed, every planted fault (gpu/mutants.h) the strategy can
// reach is switched on in turn, the strategy runs again on the same device inputs and is judged by
// the same gate; the fault is caught on that row when the gate (or the LSE check) fails. The report
// is the catch rate per fault over the tier that ran. Needs a binary built with
// -DMLACHECK_MUTANTS=ON and a GPU.
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu/mutants.h"
#include "gpu/registry.h"

namespace mlacheck::cli {

class MutantTally {
 public:
  // Whether the fault is planted where the strategy's launches go (a fault of the mma kernel is
  // out of reach of the portable strategies).
  static bool reaches(const gpu::Strategy& s, const gpu::MutantInfo& m);

  // Runs `fails` once per reachable fault with that fault active (reset to none afterwards, also
  // when `fails` throws: an exception counts as caught and is named in the report).
  void run_faults(const gpu::Strategy& s, const std::string& case_name, const std::function<bool()>& fails);

  // The table on stdout, "caught" per fault, and the catch rate; `tier` names what ran.
  void print(const std::string& tier) const;
  // Every reachable fault caught on some row (and at least one row ran).
  bool all_caught() const;
  nlohmann::json to_json() const;

 private:
  struct Count {
    int rows = 0, caught = 0, errors = 0;
    std::string first_caught;  // "case strategy" of the first row that caught it
  };
  std::map<gpu::Mutant, Count> counts_;
};

}  // namespace mlacheck::cli
