#include "problem/recipe.h"

#include <array>

namespace mlacheck::problem {
namespace {

// Each row is the DESIGN.md recipe table; the right column names the seed it was read from.
constexpr std::array kRecipes{
    Recipe{"a16w16", QFormat::bf16, KvFormat::bf16, PFormat::bf16, SoftmaxBase::e, 0.0f,
           "seed 004 (aiter a16w16)"},
    Recipe{"a16w8", QFormat::bf16, KvFormat::fp8, PFormat::bf16, SoftmaxBase::e, 0.0f,
           "seed 000 (aiter a16w8)"},
    Recipe{"a8w8", QFormat::fp8_harness, KvFormat::fp8, PFormat::fp8, SoftmaxBase::e, 0.0f,
           "the harness reference (aiter golden model of mla_a8w8, NUMERICS §6.2)"},
    Recipe{"a8w8-static", QFormat::fp8_static, KvFormat::fp8, PFormat::fp8, SoftmaxBase::e,
           6.0f / 448.0f, "seed 004 (fixed Q scale absmax 6.0 / 448)"},
    Recipe{"a8w8-cast", QFormat::fp8_cast, KvFormat::fp8, PFormat::fp8, SoftmaxBase::e, 0.0f,
           "seed 002 (Triton kernels: Q cast to fp8, P cast to the KV type)"},
    Recipe{"a16w4", QFormat::bf16, KvFormat::mxfp4, PFormat::bf16, SoftmaxBase::e, 0.0f,
           "seed 001"},
    Recipe{"a4w4", QFormat::mxfp4_dynamic, KvFormat::mxfp4, PFormat::f16, SoftmaxBase::two, 0.0f,
           "seed 000 (per-32 dynamic MXFP4 Q, fp16 P, base-2 softmax)"},
};

}  // namespace

std::span<const Recipe> recipes() { return kRecipes; }

std::optional<Recipe> find_recipe(std::string_view name) {
  for (const Recipe& r : kRecipes)
    if (r.name == name) return r;
  return std::nullopt;
}

std::string_view to_string(QFormat f) {
  switch (f) {
    case QFormat::bf16: return "bf16";
    case QFormat::fp8_harness: return "fp8-harness";
    case QFormat::fp8_dynamic: return "fp8-dynamic";
    case QFormat::fp8_static: return "fp8-static";
    case QFormat::fp8_cast: return "fp8-cast";
    case QFormat::mxfp4_dynamic: return "mxfp4-dynamic";
  }
  return "?";
}
std::string_view to_string(KvFormat f) {
  switch (f) {
    case KvFormat::bf16: return "bf16";
    case KvFormat::fp8: return "fp8";
    case KvFormat::mxfp4: return "mxfp4";
  }
  return "?";
}
std::string_view to_string(PFormat f) {
  switch (f) {
    case PFormat::f32: return "f32";
    case PFormat::bf16: return "bf16";
    case PFormat::f16: return "f16";
    case PFormat::fp8: return "fp8";
  }
  return "?";
}
std::string_view to_string(SoftmaxBase b) { return b == SoftmaxBase::e ? "e" : "2"; }

}  // namespace mlacheck::problem
