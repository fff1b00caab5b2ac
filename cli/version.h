#pragma once
#include <string_view>

namespace mlacheck::cli {
// "mlacheck X.Y.Z (git <hash>, gpu backend <name>)": the hash and backend are fixed at configure time;
// a stamps build (gpu/stamps.h) adds ", hopper kernel stamps" after the backend.
std::string_view version_string();
}  // namespace mlacheck::cli
