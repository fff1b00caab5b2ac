#include "io/manifest.h"

#include "io/atomic_file.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#define XXH_INLINE_ALL  // header-only: no libxxhash needed where the binary runs
#include <xxhash.h>

#include "io/error.h"

namespace mlacheck::io {

std::string hash_bytes(std::span<const std::byte> bytes) {
  XXH64_canonical_t canonical;
  XXH64_canonicalFromHash(&canonical, XXH3_64bits(bytes.data(), bytes.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : canonical.digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

Manifest read_manifest(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot open the manifest");
  std::stringstream text;
  text << in.rdbuf();
  Manifest m;
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.at("schema").get<std::string>() != kManifestSchema)
      throw Error(path.string() + ": schema '" + j.at("schema").get<std::string>() + "', expected '" +
                  kManifestSchema + "'");
    if (j.at("hash").get<std::string>() != "xxh3-64")
      throw Error(path.string() + ": hash '" + j.at("hash").get<std::string>() + "', expected xxh3-64");
    for (const auto& c : j.at("cases"))
      m.cases.push_back({c.at("name").get<std::string>(), c.at("case").get<std::string>(),
                         c.at("tensors").get<std::map<std::string, std::string>>()});
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": not a valid manifest: " + e.what());
  }
  return m;
}

void write_manifest(const std::filesystem::path& path, const Manifest& manifest) {
  nlohmann::ordered_json j;
  j["schema"] = kManifestSchema;
  j["hash"] = "xxh3-64";
  j["cases"] = nlohmann::ordered_json::array();
  for (const ManifestCase& c : manifest.cases)
    j["cases"].push_back({{"name", c.name}, {"case", c.case_line}, {"tensors", c.hashes}});
  write_file_atomically(path, j.dump(2) + '\n');
}

}  // namespace mlacheck::io
