// Reads a file written by Python safetensors (scripts/python/check_safetensors_interop.py
// --write-python-file $MLACHECK_INTEROP_DIR/python_written.safetensors) and checks every tensor
// and the metadata against the expectation the script wrote next to it. Skips, saying how to run
// it, when that file is not there: it needs Python, which the GoogleTest suite does not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "io/safetensors.h"
#include "tests/io/hex.h"

namespace mlacheck::io {
namespace {

TEST(IoInterop, ReadsAFileWrittenByPython) {
  const char* env = std::getenv("MLACHECK_INTEROP_DIR");
  const std::filesystem::path dir = env != nullptr ? env : "";
  const auto file = dir / "python_written.safetensors";
  if (env == nullptr || *env == '\0' || !std::filesystem::exists(file))
    GTEST_SKIP() << "no $MLACHECK_INTEROP_DIR/python_written.safetensors; make it with "
                    "scripts/python/check_safetensors_interop.py --write-python-file";

  const nlohmann::json expect = nlohmann::json::parse(std::ifstream(dir / "python_written.expect.json"));
  const SafetensorsReader reader(file);
  EXPECT_EQ(nlohmann::json(reader.metadata()), expect["metadata"]);
  EXPECT_EQ(reader.names().size(), expect["tensors"].size());
  for (const auto& [name, e] : expect["tensors"].items()) {
    const Tensor t = reader.read(name);
    EXPECT_EQ(dtype_name(t.dtype), e["dtype"].get<std::string>()) << name;
    EXPECT_EQ(t.shape, e["shape"].get<std::vector<int64_t>>()) << name;
    EXPECT_EQ(testing::to_hex(t.bytes), e["hex"].get<std::string>()) << name;
  }
}

}  // namespace
}  // namespace mlacheck::io
