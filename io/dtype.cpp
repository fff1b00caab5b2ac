#include "io/dtype.h"

#include <array>
#include <string>

#include "io/error.h"

namespace mlacheck::io {
namespace {

struct DTypeRow {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

// One table for names and sizes, in enum order (dtype_name indexes it by the enum value).
constexpr std::array<DTypeRow, 9> kTable{{
    {DType::BF16, "BF16", 2},
    {DType::F16, "F16", 2},
    {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},
    {DType::I32, "I32", 4},
    {DType::I64, "I64", 8},
    {DType::U8, "U8", 1},
    {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::F8_E8M0, "F8_E8M0", 1},
}};

constexpr bool table_in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].dtype) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kTable rows must follow the DType enum order");
static_assert(std::size(kAllDTypes) == kTable.size(), "kAllDTypes must list every DType");

const DTypeRow& row(DType dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  // An out-of-range enum value can only come from a cast; fail clearly rather than read past.
  if (index >= kTable.size()) throw Error("mlacheck::io::DType value " + std::to_string(index) + " is out of range");
  return kTable[index];
}

}  // namespace

std::string_view dtype_name(DType dtype) { return row(dtype).name; }

std::size_t dtype_size(DType dtype) { return row(dtype).size; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeRow& r : kTable)
    if (r.name == name) return r.dtype;
  return std::nullopt;
}

}  // namespace mlacheck::io
