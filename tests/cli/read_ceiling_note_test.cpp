// cli/read_ceiling_note.h: bench says when a row beat its own read ceiling, and only then.
#include <gtest/gtest.h>

#include "cli/read_ceiling_note.h"

namespace mlacheck::cli {
namespace {

TEST(CliReadCeilingNote, SilentWhileEveryRowIsUnderTheCeiling) {
  EXPECT_FALSE(read_ceiling_note(0, 94.6).has_value());
  EXPECT_FALSE(read_ceiling_note(0, 100.0).has_value());
}

TEST(CliReadCeilingNote, NamesTheRowsAboveAndTheHighestShare) {
  const auto one = read_ceiling_note(1, 100.5);
  ASSERT_TRUE(one.has_value());
  EXPECT_NE(one->find("1 row is above 100 %"), std::string::npos) << *one;
  EXPECT_NE(one->find("highest 100.5 %"), std::string::npos) << *one;
  const auto two = read_ceiling_note(2, 100.7);
  ASSERT_TRUE(two.has_value());
  EXPECT_NE(two->find("2 rows are above"), std::string::npos) << *two;
  EXPECT_NE(two->find("not the memory's limit"), std::string::npos) << *two;
}

}  // namespace
}  // namespace mlacheck::cli
