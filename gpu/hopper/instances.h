#pragma once
// The Hopper family's compiled attention instances (gpu/common/instance.h): bf16 KV with bf16 P (the
// products reading the cache rows as stored), fp8 and MXFP4 KV with bf16 P (the rows decoded to bf16
// by the tile's owner, gpu/hopper/attention.hip), and MXFP4 KV with f16 P and base 2 (a4w4: Q as
// the Q quantization's MXFP4 codes). Plain C++: the family's supports() asks it;
// gpu/hopper/attention.hip instantiates each row.
#include <array>
#include <cstddef>
#include <optional>

#include "gpu/common/instance.h"
#include "problem/recipe.h"

namespace mlacheck::gpu::hopper {

using common::Instance;

inline constexpr std::array kInstances{
    Instance{problem::KvFormat::bf16, problem::PFormat::bf16, problem::SoftmaxBase::e},  // a16w16
    Instance{problem::KvFormat::fp8, problem::PFormat::bf16, problem::SoftmaxBase::e},   // a16w8
    Instance{problem::KvFormat::mxfp4, problem::PFormat::bf16, problem::SoftmaxBase::e}, // a16w4
    Instance{problem::KvFormat::mxfp4, problem::PFormat::f16, problem::SoftmaxBase::two}, // a4w4
};

constexpr std::optional<std::size_t> find_instance(const problem::Recipe& r) {
  return common::find_instance(kInstances, r);
}

}  // namespace mlacheck::gpu::hopper
