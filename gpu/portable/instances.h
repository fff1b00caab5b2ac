#pragma once
// The one list of the portable attention kernel's compiled instances (gpu/common/instance.h).
// Plain C++: the family's supports() asks it whether a recipe has a kernel;
// gpu/portable/attention.hip instantiates each row.
#include <array>
#include <cstddef>
#include <optional>

#include "gpu/common/instance.h"
#include "problem/recipe.h"

namespace mlacheck::gpu::portable {

using common::Instance;

inline constexpr std::array kInstances{
    Instance{problem::KvFormat::bf16, problem::PFormat::bf16, problem::SoftmaxBase::e},    // a16w16
    Instance{problem::KvFormat::fp8, problem::PFormat::bf16, problem::SoftmaxBase::e},     // a16w8
    Instance{problem::KvFormat::fp8, problem::PFormat::fp8, problem::SoftmaxBase::e},      // a8w8*
    Instance{problem::KvFormat::mxfp4, problem::PFormat::bf16, problem::SoftmaxBase::e},   // a16w4
    Instance{problem::KvFormat::mxfp4, problem::PFormat::f16, problem::SoftmaxBase::two},  // a4w4
};

constexpr std::optional<std::size_t> find_instance(const problem::Recipe& r) {
  return common::find_instance(kInstances, r);
}

}  // namespace mlacheck::gpu::portable
