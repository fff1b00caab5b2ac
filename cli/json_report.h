#pragma once
// Writes a command's --json report; one place for the file handling every command shares.
#include <string>

#include <nlohmann/json.hpp>

namespace mlacheck::cli {

// Pretty-printed with a trailing newline; throws std::runtime_error naming the path on failure.
void write_json_report(const std::string& path, const nlohmann::json& report);

}  // namespace mlacheck::cli
