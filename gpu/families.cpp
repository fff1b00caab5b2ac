// The table of kernel families (gpu/family.h): each family's own definition lives in its folder
// (gpu/portable/family.cpp, gpu/fast/family.cpp).
#include <array>
#include <stdexcept>
#include <string>

#include "gpu/family.h"
#include "gpu/fast/family.h"
#include "gpu/hopper/family.h"
#include "gpu/portable/family.h"

namespace mlacheck::gpu {

const Family& family(FamilyId id) {
  switch (id) {
    case FamilyId::portable: return portable::family();
    case FamilyId::mma: return fast::family();
    case FamilyId::hopper: return hopper::family();
  }
  // A FamilyId outside the enum: a programming error, refused, never another family's kernels.
  throw std::logic_error("gpu: unknown kernel family " + std::to_string(static_cast<int>(id)));
}

std::span<const Family* const> families() {
  static const std::array<const Family*, 3> all{&family(FamilyId::portable), &family(FamilyId::mma),
                                                &family(FamilyId::hopper)};
  return all;
}

std::string vendors_text(const Vendors& v) {
  if (v.nvidia && v.amd) return "NVIDIA and AMD";
  if (v.nvidia) return "NVIDIA only";
  if (v.amd) return "AMD only";
  return "no vendor";
}

std::string_view merge_weights_text(common::MergeWeights w) {
  switch (w) {
    case common::MergeWeights::emulated:
      return "the emulation's double-precision exp and log (its bits)";
    case common::MergeWeights::vendor:
      return "the vendor's float32 exp and log (within the kernel bound, as the softmax's exp)";
  }
  return "unknown";
}

std::optional<std::string> not_built_here(const Family& f) {
  if (f.launcher != nullptr) return std::nullopt;
  // MLACHECK_GPU_BACKEND_NAME comes from gpu/CMakeLists.txt: the resolved backend.
  const std::string backend = MLACHECK_GPU_BACKEND_NAME;
#if defined(MLACHECK_GPU_RUNTIME_NVIDIA)
  if (!f.vendors.nvidia)
    return "family " + std::string(f.name) + " is compiled for " + vendors_text(f.vendors) +
           "; this build's GPU runtime is NVIDIA's (MLACHECK_GPU=" + backend + ")";
#elif defined(MLACHECK_GPU_RUNTIME_AMD)
  if (!f.vendors.amd)
    return "family " + std::string(f.name) + " is compiled for " + vendors_text(f.vendors) +
           "; this build's GPU runtime is AMD's (MLACHECK_GPU=" + backend + ")";
#endif
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  if (!f.build_requirement.empty())
    return "family " + std::string(f.name) + " needs " + std::string(f.build_requirement);
  throw std::logic_error("gpu: family " + std::string(f.name) + " is built here but has no launcher");
#else
  return "built without a GPU runtime (MLACHECK_GPU=" + backend + ")";
#endif
}

}  // namespace mlacheck::gpu
