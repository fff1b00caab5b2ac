#pragma once
// The Hopper family's compiled attention instances (gpu/common/instance.h): bf16 KV with bf16 P (the
// products reading the cache rows as stored), fp8 and MXFP4 KV with bf16 P (the rows decoded to bf16
// by the tile's owner, gpu/hopper/attention.hip), MXFP4 KV with f16 P and base 2 (a4w4: Q as the Q
// quantization's MXFP4 codes), and fp8 KV with fp8 P (a8w8*: Q as the Q quantization's fp8 codes,
// every operand an f16 value). Plain C++: the family's supports() asks it;
// gpu/hopper/attention.hip instantiates each row.
#include <array>
#include <cstddef>
#include <optional>

#include "gpu/common/instance.h"
#include "problem/recipe.h"

namespace mlacheck::gpu::hopper {

using common::Instance;

inline constexpr std::array kInstances{
    Instance{problem::KvFormat::bf16, problem::PFormat::bf16, problem::SoftmaxBase::two},  // a16w16
    Instance{problem::KvFormat::fp8, problem::PFormat::bf16, problem::SoftmaxBase::two},   // a16w8
    Instance{problem::KvFormat::mxfp4, problem::PFormat::bf16, problem::SoftmaxBase::two}, // a16w4
    Instance{problem::KvFormat::mxfp4, problem::PFormat::f16, problem::SoftmaxBase::two}, // a4w4
    Instance{problem::KvFormat::fp8, problem::PFormat::fp8, problem::SoftmaxBase::two},    // a8w8*
};

constexpr std::optional<std::size_t> find_instance(const problem::Recipe& r) {
  return common::find_instance(kInstances, r);
}

// Whether the instance of P format `p` reads a Q of format `q`: a bf16 Q with bf16 P, the Q
// quantization's MXFP4 codes with f16 P (a4w4), its fp8 codes with fp8 P (a8w8*), each exactly a
// value of the products' operand type (bf16, bf16, f16).
constexpr bool reads_q(problem::PFormat p, problem::QFormat q) {
  switch (p) {
    case problem::PFormat::bf16:
      return q == problem::QFormat::bf16;
    case problem::PFormat::f16:
      return q == problem::QFormat::mxfp4_dynamic;
    case problem::PFormat::fp8:
      return problem::is_fp8(q);
    default:
      return false;
  }
}

}  // namespace mlacheck::gpu::hopper
