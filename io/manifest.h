#pragma once
// The manifest of hashes (DESIGN.md "Golden files"): large golden cases are not committed; they
// are regenerated bit-identically from their case line, and data/manifest.json holds the xxh3-64
// hash of each tensor's bytes so a regeneration on any machine can be checked.
//
// JSON: {"schema": "mlacheck-manifest/1", "hash": "xxh3-64",
//        "cases": [{"name": ..., "case": "<case-list line>", "tensors": {"q": "<16 hex>", ...}}]}
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlacheck::io {

inline constexpr const char* kManifestSchema = "mlacheck-manifest/1";

// xxh3-64 of the bytes, as 16 lowercase hex digits (xxHash's canonical big-endian form).
std::string hash_bytes(std::span<const std::byte> bytes);

// The same hash of bytes given in pieces (XXH3's streaming state), for a tensor that is never
// whole in memory: digest() after update(a), update(b) equals hash_bytes(a + b).
class StreamingHash {
 public:
  StreamingHash();
  ~StreamingHash();
  StreamingHash(const StreamingHash&) = delete;
  StreamingHash& operator=(const StreamingHash&) = delete;
  void update(std::span<const std::byte> bytes);
  std::string digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct ManifestCase {
  std::string name;
  std::string case_line;                      // ref/case_list.h format
  std::map<std::string, std::string> hashes;  // tensor name -> hash_bytes()
};

struct Manifest {
  std::vector<ManifestCase> cases;
};

// Throws io::Error naming `origin` for invalid JSON, a wrong schema or no case at all.
Manifest parse_manifest(std::string_view text, const std::string& origin);
// The same for a file, which must be a regular file of at most kMaxTextInputBytes (text_file.h).
Manifest read_manifest(const std::filesystem::path& path);
// Written through a temporary file and a rename, like the safetensors writer.
void write_manifest(const std::filesystem::path& path, const Manifest& manifest);

}  // namespace mlacheck::io
