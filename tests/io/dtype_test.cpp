// DType names and sizes: the header strings must match the reference implementation's exactly.
#include <gtest/gtest.h>

#include "io/dtype.h"

namespace mlacheck::io {
namespace {

TEST(IoDType, NamesAndSizesMatchTheSafetensorsSpelling) {
  struct Row {
    DType dtype;
    const char* name;
    std::size_t size;
  };
  const Row rows[] = {{DType::BF16, "BF16", 2}, {DType::F16, "F16", 2},         {DType::F32, "F32", 4},
                      {DType::F64, "F64", 8},   {DType::I32, "I32", 4},         {DType::I64, "I64", 8},
                      {DType::U8, "U8", 1},     {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E8M0, "F8_E8M0", 1}};
  ASSERT_EQ(std::size(rows), std::size(kAllDTypes));
  for (const Row& r : rows) {
    EXPECT_EQ(dtype_name(r.dtype), r.name);
    EXPECT_EQ(dtype_size(r.dtype), r.size) << r.name;
    EXPECT_EQ(dtype_from_name(r.name), r.dtype) << r.name;
  }
}

TEST(IoDType, UnsupportedAndMisspelledNamesAreRejected) {
  // Real safetensors dtypes we do not support, wrong case, and junk.
  for (const char* name : {"F8_E5M2", "BOOL", "I8", "U16", "bf16", "F8_E4M3FN", "", " F32"})
    EXPECT_FALSE(dtype_from_name(name).has_value()) << "'" << name << "'";
}

}  // namespace
}  // namespace mlacheck::io
