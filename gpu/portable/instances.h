#pragma once
// The one list of the portable attention kernel's compiled instances. The kernel is a template over
// what changes its inner loops (KV format, P format, softmax base); everything else of a recipe (Q
// format, fp8 variant, softmax step, partial format, scales) is a run-time argument. Plain C++: the
// registry asks it whether a recipe has a kernel; gpu/portable/decode.hip instantiates each row.
#include <array>
#include <cstddef>
#include <optional>

#include "problem/recipe.h"

namespace mlacheck::gpu::portable {

struct Instance {
  problem::KvFormat kv;
  problem::PFormat p;
  problem::SoftmaxBase base;
};

inline constexpr std::array kInstances{
    Instance{problem::KvFormat::bf16, problem::PFormat::bf16, problem::SoftmaxBase::e},    // a16w16
    Instance{problem::KvFormat::fp8, problem::PFormat::bf16, problem::SoftmaxBase::e},     // a16w8
    Instance{problem::KvFormat::fp8, problem::PFormat::fp8, problem::SoftmaxBase::e},      // a8w8*
    Instance{problem::KvFormat::mxfp4, problem::PFormat::bf16, problem::SoftmaxBase::e},   // a16w4
    Instance{problem::KvFormat::mxfp4, problem::PFormat::f16, problem::SoftmaxBase::two},  // a4w4
};

// Index into kInstances of the recipe's kernel, or nullopt when none is compiled.
constexpr std::optional<std::size_t> find_instance(const problem::Recipe& r) {
  for (std::size_t i = 0; i < kInstances.size(); ++i)
    if (kInstances[i].kv == r.kv && kInstances[i].p == r.p && kInstances[i].base == r.base) return i;
  return std::nullopt;
}

}  // namespace mlacheck::gpu::portable
