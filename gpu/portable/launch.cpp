// The launcher of the portable strategies: the portable kernel's own requirements, then the shared
// steps of common::queue_decode. Plain C++, compiled in every build; only builds with a GPU runtime
// link it in (gpu/portable/family.cpp).
#include "gpu/portable/launch.h"

#include <stdexcept>
#include <string>

#include "gpu/common/decode_steps.h"
#include "gpu/portable/config.h"
#include "gpu/portable/family.h"
#include "gpu/portable/instances.h"
#include "gpu/portable/kernels.h"

namespace mlacheck::gpu::portable {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("portable decode launch: " + what);
}

}  // namespace

void launch(const Strategy& s, const DecodeParams& p, StreamHandle stream) {
  require(s.tunables.threads == kThreads, "threads must be " + std::to_string(kThreads));
  const auto instance = find_instance(s.recipe);
  require(instance.has_value(), "no kernel instance for recipe " + std::string(s.recipe.name));
  const int splits = s.schedule == Schedule::split_k ? s.tunables.splits : 0;
  require(s.schedule != Schedule::persistent, "the portable kernel has no persistent schedule");
  require(s.schedule == Schedule::single_pass || splits >= 1,
          "split count " + std::to_string(splits) + " < 1");
  common::queue_decode(s.recipe, *instance, problem::SplitPlan::uniform(splits), 0, p, stream,
                       &launch_attention, family().merge_weights);
}

}  // namespace mlacheck::gpu::portable
