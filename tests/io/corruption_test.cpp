// Random damage to a valid file — flipped bytes, cut-off ends, patched length — must give either a
// readable file or an io::Error, never a crash or another exception. Deterministic (fixed seed,
// printed) so a failure replays; run it under ASan/UBSan to catch undefined behaviour too.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "io/safetensors.h"
#include "tests/io/crafted_file.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

std::string valid_file_bytes(const testing::ScratchDir& dir) {
  SafetensorsWriter writer;
  writer.set_metadata("schema", "v1");
  writer.add("q", Tensor::zeros(DType::BF16, {2, 3}));
  writer.add("scale", Tensor::zeros(DType::F32, {}));
  writer.add("codes", Tensor::zeros(DType::F8_E4M3, {4, 0}));
  writer.write(dir / "valid.safetensors");
  return testing::read_file(dir / "valid.safetensors");
}

// Opens and reads everything; io::Error is an acceptable answer, anything else fails the test.
void open_and_read_all(const std::filesystem::path& path, const std::string& what) {
  try {
    const SafetensorsReader reader(path);
    for (const std::string& name : reader.names()) (void)reader.read(name);
  } catch (const Error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": non-io exception: " << e.what();
  }
}

TEST(IoCorruption, RandomDamageGivesDataOrAnIoError) {
  testing::ScratchDir dir;
  const std::string valid = valid_file_bytes(dir);
  const auto path = dir / "damaged.safetensors";
  const unsigned seed = 20240611;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = valid;
    const int kind = round % 4;
    if (kind == 0) {  // a few random bytes anywhere (mostly in the header: it is most of the file)
      for (int i = 0; i < 3; ++i) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    } else if (kind == 1) {  // JSON-significant characters in the header
      const std::string specials = "{}[]\",:-.0129e ";
      bytes[8 + rng() % (bytes.size() - 8)] = specials[rng() % specials.size()];
    } else if (kind == 2) {  // cut off
      bytes.resize(rng() % bytes.size());
    } else {  // a different length field
      bytes.replace(0, 8, testing::le_u64(rng() % (bytes.size() + 16)));
    }
    testing::write_file(path, bytes);
    open_and_read_all(path, "round " + std::to_string(round));
  }
}

}  // namespace
}  // namespace mlacheck::io
