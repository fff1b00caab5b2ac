#include "ref/case_spec.h"

#include <fmt/core.h>

namespace mlacheck::ref {

std::string_view to_string(Profile p) {
  switch (p) {
    case Profile::harness: return "harness";
    case Profile::peaked: return "peaked";
    case Profile::outliers: return "outliers";
    case Profile::boundary: return "boundary";
  }
  return "?";
}

std::optional<Profile> parse_profile(std::string_view s) {
  for (Profile p : {Profile::harness, Profile::peaked, Profile::outliers, Profile::boundary})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

std::string default_name(const CaseSpec& c) {
  std::string n = fmt::format("bs{}_kv{}_s{}", c.batch, c.kv_len, c.seed);
  if (c.profile != Profile::harness) n += fmt::format("_{}", to_string(c.profile));
  if (c.q_len != 1) n += fmt::format("_q{}", c.q_len);
  if (c.ragged) n += "_ragged";
  if (c.page_size != 1) n += fmt::format("_p{}", c.page_size);
  if (c.shuffle_pages) n += "_shuffled";
  if (c.poison_unused) n += "_poisoned";
  return n;
}

}  // namespace mlacheck::ref
