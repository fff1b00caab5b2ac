#pragma once
// The element types a safetensors file of ours may hold, with their header names and sizes.
// The names are the reference implementation's (huggingface/safetensors); dtypes outside this list
// (F8_E5M2, BOOL, ...) are rejected by name so that an unsupported file fails loudly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mlacheck::io {

enum class DType : uint8_t { BF16, F16, F32, F64, I32, I64, U8, F8_E4M3, F8_E8M0 };

inline constexpr DType kAllDTypes[] = {DType::BF16, DType::F16,     DType::F32,
                                       DType::F64,  DType::I32,     DType::I64,
                                       DType::U8,   DType::F8_E4M3, DType::F8_E8M0};

// "BF16", "F8_E4M3", ... exactly as written in a safetensors header.
std::string_view dtype_name(DType dtype);
// The inverse of dtype_name; nullopt for a name that is unknown or unsupported. Case-sensitive.
std::optional<DType> dtype_from_name(std::string_view name);
// Bytes per element.
std::size_t dtype_size(DType dtype);

}  // namespace mlacheck::io
