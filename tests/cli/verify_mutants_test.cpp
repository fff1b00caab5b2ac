// cli/verify_mutants.h: which registry strategies a planted fault can reach (a fault of one family's
// kernel counts only on that family's rows; a fault of the shared steps on every row), so that a
// tier's catch rate is never a fault that nothing ran.
#include <gtest/gtest.h>

#include "cli/verify_mutants.h"
#include "gpu/mutants.h"
#include "gpu/registry.h"

namespace mlacheck::cli {
namespace {

TEST(VerifyMutants, AFaultReachesTheRowsOfItsSiteOnly) {
  int hopper_rows = 0;
  for (const gpu::Strategy& s : gpu::strategies()) {
    hopper_rows += s.family->id == gpu::FamilyId::hopper;
    for (const gpu::MutantInfo& m : gpu::mutants()) {
      bool expected = true;
      if (m.site == gpu::MutantSite::mma_kernel) expected = s.family->id == gpu::FamilyId::mma;
      if (m.site == gpu::MutantSite::hopper_kernel) expected = s.family->id == gpu::FamilyId::hopper;
      EXPECT_EQ(MutantTally::reaches(s, m), expected) << m.name << " on " << s.name;
    }
  }
  // The hopper fault is planted in that family's kernel: reached by its rows, by no other family's.
  const gpu::MutantInfo& packed = gpu::mutants().back();
  ASSERT_EQ(packed.id, gpu::Mutant::packed_token_mask);
  const gpu::Strategy* mma = gpu::find_strategy("a16w16/split-k/mma");
  ASSERT_NE(mma, nullptr);
  EXPECT_FALSE(MutantTally::reaches(*mma, packed));
  if (hopper_rows > 0) {
    const gpu::Strategy* hopper = gpu::find_strategy("a16w16/split-k/hopper");
    ASSERT_NE(hopper, nullptr);
    EXPECT_TRUE(MutantTally::reaches(*hopper, packed));
  }
}

}  // namespace
}  // namespace mlacheck::cli
