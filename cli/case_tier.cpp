#include "cli/case_tier.h"

#include <cstdlib>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace mlacheck::cli {

std::string_view tier_name(CaseTier tier) {
  switch (tier) {
    case CaseTier::quick: return "quick";
    case CaseTier::standard: return "standard";
    case CaseTier::full: return "full";
  }
  return "?";
}

std::string data_case_list(std::string_view file_name) {
  if (const char* dir = std::getenv("MLACHECK_DATA_DIR"); dir != nullptr && *dir != '\0')
    return fmt::format("{}/cases/{}", dir, file_name);
  return fmt::format("data/cases/{}", file_name);
}

std::string tier_case_list(CaseTier tier) { return data_case_list(fmt::format("{}.txt", tier_name(tier))); }

CLI::Option* add_tier_option(CLI::App& command, CaseTier& tier, std::string_view what_default) {
  const std::map<std::string, CaseTier> names{
      {"quick", CaseTier::quick}, {"standard", CaseTier::standard}, {"full", CaseTier::full}};
  return command
      .add_option("--tier", tier,
                  fmt::format("case tier: quick, standard or full = data/cases/<tier>.txt ({})", what_default))
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
      ->option_text("quick|standard|full");
}

}  // namespace mlacheck::cli
