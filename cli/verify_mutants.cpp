#include "cli/verify_mutants.h"

#include <cstdio>
#include <exception>

#include <fmt/core.h>

namespace mlacheck::cli {
namespace {

// Switches a fault on for one scope.
class ActiveMutant {
 public:
  explicit ActiveMutant(gpu::Mutant m) { gpu::set_active_mutant(m); }
  ~ActiveMutant() { gpu::set_active_mutant(gpu::Mutant::none); }
  ActiveMutant(const ActiveMutant&) = delete;
  ActiveMutant& operator=(const ActiveMutant&) = delete;
};

std::string_view site_name(gpu::MutantSite s) {
  switch (s) {
    case gpu::MutantSite::mma_kernel: return "mma kernel";
    case gpu::MutantSite::hopper_kernel: return "hopper kernel";
    case gpu::MutantSite::shared_steps: return "shared steps";
  }
  return "?";
}

}  // namespace

bool MutantTally::reaches(const gpu::Strategy& s, const gpu::MutantInfo& m) {
  switch (m.site) {
    case gpu::MutantSite::shared_steps: return true;
    case gpu::MutantSite::mma_kernel: return s.family->id == gpu::FamilyId::mma;
    case gpu::MutantSite::hopper_kernel: return s.family->id == gpu::FamilyId::hopper;
  }
  return false;
}

void MutantTally::run_faults(const gpu::Strategy& s, const std::string& case_name,
                             const std::function<bool()>& fails) {
  for (const gpu::MutantInfo& m : gpu::mutants()) {
    if (!reaches(s, m)) continue;
    Count& c = counts_[m.id];
    ++c.rows;
    bool caught = false;
    try {
      const ActiveMutant active(m.id);
      caught = fails();
    } catch (const std::exception&) {
      caught = true;
      ++c.errors;
    }
    if (caught && c.caught++ == 0) c.first_caught = case_name + " " + s.name;
  }
}

void MutantTally::print(const std::string& tier) const {
  fmt::print("\nplanted faults (verify --mutants) on {}: a fault is caught when some row fails with it\n", tier);
  fmt::print("{:<30} {:<13} {:<7} {:>13}  {}\n", "fault", "planted in", "caught", "failing rows", "first row that failed");
  int caught = 0, reached = 0;
  for (const gpu::MutantInfo& m : gpu::mutants()) {
    const auto it = counts_.find(m.id);
    if (it == counts_.end() || it->second.rows == 0) {
      fmt::print("{:<30} {:<13} {:<7} {:>13}  (no selected strategy reaches it)\n", m.name, site_name(m.site), "-", "-");
      continue;
    }
    const Count& c = it->second;
    ++reached;
    caught += c.caught > 0 ? 1 : 0;
    fmt::print("{:<30} {:<13} {:<7} {:>13}  {}{}\n", m.name, site_name(m.site), c.caught > 0 ? "yes" : "NO",
               fmt::format("{}/{}", c.caught, c.rows), c.first_caught,
               c.errors > 0 ? fmt::format(" ({} rows threw)", c.errors) : "");
  }
  fmt::print("catch rate: {}/{} faults ({:.0f} %)\n", caught, reached, reached > 0 ? 100.0 * caught / reached : 0.0);
  std::fflush(stdout);
}

bool MutantTally::all_caught() const {
  bool any = false;
  for (const auto& [id, c] : counts_) {
    if (c.rows == 0) continue;
    any = true;
    if (c.caught == 0) return false;
  }
  return any;
}

nlohmann::json MutantTally::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const gpu::MutantInfo& m : gpu::mutants()) {
    const auto it = counts_.find(m.id);
    const Count c = it == counts_.end() ? Count{} : it->second;
    j.push_back({{"fault", m.name},
                 {"description", m.description},
                 {"planted_in", site_name(m.site)},
                 {"rows", c.rows},
                 {"failing_rows", c.caught},
                 {"rows_that_threw", c.errors},
                 {"caught", c.caught > 0},
                 {"first_failing_row", c.first_caught}});
  }
  return j;
}

}  // namespace mlacheck::cli
