#pragma once
// Recipes: the numerics of one MLA decode (DESIGN.md "Strategy = recipe x schedule"). One table,
// shared by the CPU reference, the GPU strategies and the gate, so none needs another's code.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace mlacheck::problem {

// How Q enters Q·Kᵀ.
enum class QFormat : uint8_t {
  bf16,           // unquantized
  fp8_harness,    // the harness's per-tensor quantize_fp8 (NUMERICS §4)
  fp8_dynamic,    // kernel-side per-tensor fp8, float32 scale (NUMERICS §4.1)
  fp8_static,     // fp8 with a fixed scale
  fp8_cast,       // plain cast to fp8, scale 1
  mxfp4_dynamic,  // per-32 dynamic MXFP4 quantization of Q
};
enum class KvFormat : uint8_t { bf16, fp8, mxfp4 };
// What P = exp(s - max) is rounded to before P·V.
enum class PFormat : uint8_t { f32, bf16, f16, fp8 };
enum class SoftmaxBase : uint8_t { e, two };

struct Recipe {
  std::string_view name;
  QFormat q;
  KvFormat kv;
  PFormat p;
  SoftmaxBase base;
  // Fixed Q scale for fp8_static: absmax 6.0 / 448 (seed 004); 0 where unused.
  float q_static_scale;
  std::string_view source;  // where the defaults come from
};

// The seeds' recipes with their starting defaults (DESIGN.md table).
std::span<const Recipe> recipes();
std::optional<Recipe> find_recipe(std::string_view name);

std::string_view to_string(QFormat);
std::string_view to_string(KvFormat);
std::string_view to_string(PFormat);
std::string_view to_string(SoftmaxBase);

}  // namespace mlacheck::problem
