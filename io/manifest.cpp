#include "io/manifest.h"

#include "io/atomic_file.h"


#include <nlohmann/json.hpp>
#define XXH_INLINE_ALL  // header-only: no libxxhash needed where the binary runs
#include <xxhash.h>

#include "io/error.h"
#include "io/printable.h"
#include "io/text_file.h"

namespace mlacheck::io {

namespace {

std::string to_hex(XXH64_hash_t hash) {
  XXH64_canonical_t canonical;
  XXH64_canonicalFromHash(&canonical, hash);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : canonical.digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace

std::string hash_bytes(std::span<const std::byte> bytes) {
  return to_hex(XXH3_64bits(bytes.data(), bytes.size()));
}

struct StreamingHash::State {
  XXH3_state_t xxh;
};

StreamingHash::StreamingHash() : state_(std::make_unique<State>()) {
  if (XXH3_64bits_reset(&state_->xxh) != XXH_OK) throw Error("xxh3: cannot reset the hash state");
}

StreamingHash::~StreamingHash() = default;

void StreamingHash::update(std::span<const std::byte> bytes) {
  if (XXH3_64bits_update(&state_->xxh, bytes.data(), bytes.size()) != XXH_OK)
    throw Error("xxh3: cannot update the hash state");
}

std::string StreamingHash::digest() const { return to_hex(XXH3_64bits_digest(&state_->xxh)); }

Manifest parse_manifest(std::string_view text, const std::string& origin) {
  Manifest m;
  try {
    const auto j = nlohmann::json::parse(text);
    const auto field = [&](const char* key) { return printable(j.at(key).get<std::string>()); };
    if (j.at("schema").get<std::string>() != kManifestSchema)
      throw Error(origin + ": schema '" + field("schema") + "', expected '" + kManifestSchema + "'");
    if (j.at("hash").get<std::string>() != "xxh3-64")
      throw Error(origin + ": hash '" + field("hash") + "', expected xxh3-64");
    for (const auto& c : j.at("cases"))
      m.cases.push_back({c.at("name").get<std::string>(), c.at("case").get<std::string>(),
                         c.at("tensors").get<std::map<std::string, std::string>>()});
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": not a valid manifest: " + printable(e.what()));
  }
  // A manifest that pins nothing checks nothing: that is a wrong file, not a pass.
  if (m.cases.empty()) throw Error(origin + ": the manifest has no case");
  return m;
}

Manifest read_manifest(const std::filesystem::path& path) {
  return parse_manifest(read_text_file(path, "manifest"), path.string());
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
