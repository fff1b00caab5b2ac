// Text and JSON reports carry the verdicts, metrics, positions and the bound's derivation.
#include <gtest/gtest.h>

#include <limits>

#include "check/gate.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "problem/recipe.h"
#include "tests/check/harness_like.h"

namespace mlacheck::check {
namespace {

TEST(CheckReport, TextAndJsonOfAFailingGate) {
  const auto h = testing::harness_like(1, 128, 101);
  const auto emu = testing::to_bf16(h.exact);
  const Gate gate(*problem::find_recipe("a8w8"), h.data, h.layout, h.exact, emu);
  auto out = testing::widen(emu);
  out[1000] = std::numeric_limits<float>::quiet_NaN();
  out[2000] += 1e-3f;
  const GateReport g = gate.judge(out, 3);

  const std::string text = format_gate(g);
  for (const char* s : {"recipe a8w8: FAIL", "total error", "kernel error", "harness check",
                        "NaN/Inf", "positions that differ: 1", "worst 3 elements", "bf16 ulps",
                        "derived (tolerance.cpp)", "V: KV fp8", "reason:"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;

  const nlohmann::json j = nlohmann::json::parse(to_json(g).dump());  // valid JSON, NaN as null
  EXPECT_FALSE(j.at("pass").get<bool>());
  EXPECT_EQ(j.at("recipe"), "a8w8");
  const auto& total = j.at("total").at("metrics");
  EXPECT_EQ(total.at("anomalies").at("position_mismatches"), 1);
  EXPECT_EQ(total.at("anomalies").at("first_mismatch_indices").at(0), 1000);
  EXPECT_EQ(total.at("worst").size(), 3u);
  const auto& kernel = j.at("kernel").at("metrics");
  EXPECT_EQ(kernel.at("worst").at(0).at("index"), 2000);
  EXPECT_EQ(kernel.at("worst").at(0).at("position").at("dim"), 2000 % 512);
  EXPECT_FALSE(j.at("harness").at("report").at("pass").get<bool>());
  EXPECT_GT(j.at("total").at("bound").at("derivation").size(), 5u);
  EXPECT_TRUE(j.at("harness").at("report").at("max_error").is_null());
}

}  // namespace
}  // namespace mlacheck::check
