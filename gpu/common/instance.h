#pragma once
// A compiled instance of a family's attention kernel: the kernels are templates over what changes
// their inner loops (KV format, P format, softmax base); everything else of a recipe (Q format, fp8
// variant, softmax step, partial format, scales) is a run-time argument. Each family owns its list
// (gpu/portable/instances.h, gpu/fast/instances.h) and instantiates each row. Plain C++.
#include <cstddef>
#include <optional>
#include <span>

#include "problem/recipe.h"

namespace mlacheck::gpu::common {

struct Instance {
  problem::KvFormat kv;
  problem::PFormat p;
  problem::SoftmaxBase base;
};

// Index into `instances` of the recipe's kernel, or nullopt when none is compiled.
constexpr std::optional<std::size_t> find_instance(std::span<const Instance> instances,
                                                   const problem::Recipe& r) {
  for (std::size_t i = 0; i < instances.size(); ++i)
    if (instances[i].kv == r.kv && instances[i].p == r.p && instances[i].base == r.base) return i;
  return std::nullopt;
}

}  // namespace mlacheck::gpu::common
