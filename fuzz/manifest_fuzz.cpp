// Fuzz target: the manifest parser (io/manifest.h parse_manifest, what read_manifest runs on a
// file's text). Oracle: any text either parses or throws io::Error whose message starts with the
// origin; a manifest that parsed, written by write_manifest and read back by read_manifest, is the
// same manifest. Any other outcome (a json exception, bad_alloc, a crash) is a finding.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/finding.h"
#include "fuzz/scratch.h"
#include "io/error.h"
#include "io/manifest.h"

namespace {

namespace io = mlacheck::io;
using mlacheck::fuzz::finding;

bool same(const io::Manifest& a, const io::Manifest& b) {
  if (a.cases.size() != b.cases.size()) return false;
  for (std::size_t i = 0; i < a.cases.size(); ++i)
    if (a.cases[i].name != b.cases[i].name || a.cases[i].case_line != b.cases[i].case_line ||
        a.cases[i].hashes != b.cases[i].hashes)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  io::Manifest m;
  try {
    m = io::parse_manifest(text, "fuzz.json");
  } catch (const io::Error& e) {
    if (!std::string_view(e.what()).starts_with("fuzz.json"))
      finding("an io::Error does not name its origin");
    return 0;
  }
  static const mlacheck::fuzz::ScratchDir dir;
  const auto path = dir.file("manifest.json");
  io::write_manifest(path, m);  // throws nothing for a manifest that parsed: it escapes otherwise
  if (!same(io::read_manifest(path), m))
    finding("write_manifest + read_manifest changed the manifest");
  return 0;
}
