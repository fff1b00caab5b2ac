// Writes a file with every dtype (plus empty, 0-d and special-value tensors) and a JSON of what it
// must contain, for scripts/python/check_safetensors_interop.py to load with Python safetensors.
// The files go to $MLACHECK_INTEROP_DIR when it is set; otherwise to a scratch dir, so the test
// still checks that the file and its expectation agree when read back here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <vector>

#include "io/safetensors.h"
#include "tests/io/hex.h"
#include "tests/io/scratch_dir.h"

namespace mlacheck::io {
namespace {

using testing::to_hex;

// Tensor contents: raw bytes as hex always; decoded values too where numpy can decode them
// (numpy has no bf16/fp8) and JSON can hold them (finite only).
nlohmann::json expectation(const Tensor& t, bool with_values) {
  nlohmann::json e = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"hex", to_hex(t.bytes)}};
  if (!with_values) return e;
  switch (t.dtype) {
    case DType::F32: e["values"] = std::vector<float>(t.view<float>().begin(), t.view<float>().end()); break;
    case DType::F64: e["values"] = std::vector<double>(t.view<double>().begin(), t.view<double>().end()); break;
    case DType::I32: e["values"] = std::vector<int32_t>(t.view<int32_t>().begin(), t.view<int32_t>().end()); break;
    case DType::I64: e["values"] = std::vector<int64_t>(t.view<int64_t>().begin(), t.view<int64_t>().end()); break;
    case DType::U8: e["values"] = std::vector<uint8_t>(t.view<uint8_t>().begin(), t.view<uint8_t>().end()); break;
    default: break;
  }
  return e;
}

template <class T>
Tensor of(DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::copy_of<T>(dtype, std::move(shape), values);
}

struct Case {
  std::string name;
  Tensor tensor;
  bool with_values;
};

std::vector<Case> cases() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  return {
      // bf16 1.0, -2.0, 0.5, NaN (0x7FC1 keeps a payload), -inf, smallest subnormal
      {"bf16", of<uint16_t>(DType::BF16, {2, 3}, {0x3F80, 0xC000, 0x3F00, 0x7FC1, 0xFF80, 0x0001}), false},
      // fp16 1.0, -2.0, 65504 (max), smallest subnormal
      {"f16", of<uint16_t>(DType::F16, {4}, {0x3C00, 0xC000, 0x7BFF, 0x0001}), false},
      {"f32", of<float>(DType::F32, {2, 2}, {1.5f, -0.0f, std::numeric_limits<float>::max(),
                                             std::numeric_limits<float>::denorm_min()}), true},
      {"f32_specials", of<float>(DType::F32, {3}, {kInf, -kInf, std::nanf("")}), false},
      {"f64", of<double>(DType::F64, {3}, {1.0 / 3.0, -1e300, 5e-324}), true},
      {"i32", of<int32_t>(DType::I32, {3}, {INT32_MIN, -1, INT32_MAX}), true},
      {"i64", of<int64_t>(DType::I64, {2}, {INT64_MIN, INT64_MAX}), true},
      {"u8", of<uint8_t>(DType::U8, {1, 4}, {0, 1, 128, 255}), true},
      // e4m3: 1.0 (0x38), -448 (0xFE), NaN (0x7F), smallest subnormal (0x01)
      {"f8_e4m3", of<uint8_t>(DType::F8_E4M3, {4}, {0x38, 0xFE, 0x7F, 0x01}), false},
      // e8m0: 2^0 (127), 2^-127 (0), 2^127 (254), NaN (255)
      {"f8_e8m0", of<uint8_t>(DType::F8_E8M0, {2, 2}, {127, 0, 254, 255}), false},
      {"empty_2x0", Tensor::zeros(DType::F32, {2, 0}), true},
      {"scalar", of<int64_t>(DType::I64, {}, {42}), true},
  };
}

TEST(IoInterop, WritesEveryDtypeWithItsExpectation) {
  testing::ScratchDir scratch;
  const char* env = std::getenv("MLACHECK_INTEROP_DIR");
  const std::filesystem::path dir = env != nullptr && *env != '\0' ? env : scratch.path();
  std::filesystem::create_directories(dir);
  const auto file = dir / "mlacheck_all_dtypes.safetensors";

  SafetensorsWriter writer;
  nlohmann::json expect = {{"metadata", {{"writer", "mlacheck io"}, {"purpose", "python interop"}}}};
  for (const auto& [key, value] : expect["metadata"].items()) writer.set_metadata(key, value);
  for (const Case& c : cases()) {
    expect["tensors"][c.name] = expectation(c.tensor, c.with_values);
    writer.add(c.name, c.tensor);
  }
  writer.write(file);
  std::ofstream(dir / "mlacheck_all_dtypes.expect.json") << expect.dump(1) << "\n";

  // Our own reader agrees with the expectation, so a Python mismatch points at interop.
  const SafetensorsReader reader(file);
  for (const auto& [name, e] : expect["tensors"].items()) {
    const Tensor t = reader.read(name);
    EXPECT_EQ(dtype_name(t.dtype), e["dtype"].get<std::string>()) << name;
    EXPECT_EQ(to_hex(t.bytes), e["hex"].get<std::string>()) << name;
  }
  if (env == nullptr) std::cout << "[ note ] set MLACHECK_INTEROP_DIR to keep " << file.filename() << " for the Python check\n";
}

}  // namespace
}  // namespace mlacheck::io
