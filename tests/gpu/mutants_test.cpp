// gpu/mutants.h: the table of planted faults, and that a normal build carries none of them.
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "gpu/mutants.h"
#include "gpu/common/args.h"

namespace mlacheck::gpu {
namespace {

template <class Args>
constexpr bool kHasFaultField = requires(Args a) { a.mutant; };

TEST(GpuMutants, EveryFaultIsListedOnceInEnumOrder) {
  std::set<std::string> names;
  int32_t expected = 1;
  for (const MutantInfo& m : mutants()) {
    EXPECT_EQ(static_cast<int32_t>(m.id), expected++) << m.name;
    EXPECT_TRUE(names.insert(std::string(m.name)).second) << "duplicate name " << m.name;
    EXPECT_FALSE(m.description.empty()) << m.name;
  }
  // The twelve bugs issue 12 planted by hand, and the hopper kernel's packed tokens.
  EXPECT_EQ(mutants().size(), 13u);
  EXPECT_EQ(static_cast<int32_t>(mutants().back().id), static_cast<int32_t>(Mutant::packed_token_mask));
}

TEST(GpuMutants, ANormalBuildHasNoFaultField) {
  // The kernels' argument structs carry the field exactly in a -DMLACHECK_MUTANTS=ON build; without
  // it MLACHECK_MUTANT(args, m) is the constant false and the planted branches are dead code.
  EXPECT_EQ(kHasFaultField<common::AttentionArgs>, mutants_built());
  EXPECT_EQ(kHasFaultField<common::MergeArgs>, mutants_built());
  EXPECT_EQ(kHasFaultField<common::QuantArgs>, mutants_built());
  EXPECT_EQ(kHasFaultField<common::PlanArgs>, mutants_built());
  EXPECT_EQ(active_mutant(), Mutant::none);
  if (!mutants_built()) {
    EXPECT_THROW(set_active_mutant(Mutant::lse_in_base2), std::logic_error);
    EXPECT_EQ(active_mutant(), Mutant::none);
  }
  set_active_mutant(Mutant::none);  // always allowed
}

}  // namespace
}  // namespace mlacheck::gpu
