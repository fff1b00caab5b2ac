// problem/recipe.h's table as the reference reads it: every recipe present with its seed's defaults.
#include <set>

#include <gtest/gtest.h>

#include "problem/recipe.h"

namespace mlacheck::problem {
namespace {

TEST(RefRecipes, TableHasTheSevenRecipesWithSaneDefaults) {
  std::set<std::string_view> names;
  for (const Recipe& r : recipes()) {
    names.insert(r.name);
    EXPECT_FALSE(r.source.empty()) << r.name;
    EXPECT_GE(r.num_splits, 1) << r.name;
    EXPECT_GE(r.softmax_tile, 0) << r.name;
    EXPECT_EQ(r.q == QFormat::fp8_static, r.q_static_absmax > 0) << r.name;
    ASSERT_TRUE(find_recipe(r.name).has_value());
  }
  EXPECT_EQ(names, (std::set<std::string_view>{"a16w16", "a16w8", "a8w8", "a8w8-static", "a8w8-cast",
                                               "a16w4", "a4w4"}));
  EXPECT_FALSE(find_recipe("a2w2").has_value());
}

TEST(RefRecipes, TheHarnessReferenceAndTheStaticScale) {
  const Recipe a8w8 = *find_recipe("a8w8");
  EXPECT_EQ(a8w8.q, QFormat::fp8_harness);
  EXPECT_EQ(a8w8.kv, KvFormat::fp8);
  EXPECT_EQ(a8w8.p, PFormat::fp8);
  EXPECT_EQ(a8w8.softmax_tile, 0);  // aiter's golden model: exp(s - max of the split)
  EXPECT_EQ(a8w8.num_splits, 32);   // NUMERICS §6.1
  Recipe st = *find_recipe("a8w8-static");
  EXPECT_EQ(static_q_scale(st), static_cast<float>(6.0 / 448.0));
  st.fp8 = quant::Fp8Format::e4m3fnuz;
  EXPECT_EQ(static_q_scale(st), static_cast<float>(6.0 / 240.0));
  EXPECT_EQ(find_recipe("a4w4")->base, SoftmaxBase::two);
  EXPECT_EQ(find_recipe("a8w8-cast")->partial, PartialFormat::bf16);
}

}  // namespace
}  // namespace mlacheck::problem
