#include "gpu/fast/tunables.h"

namespace mlacheck::gpu::fast {

std::span<const TunableRow> tunables() {
#define TUNABLE(name, value, why) TunableRow{#name, value, why},
  static constexpr TunableRow kRows[] = {
#include "data/tunables/fast.def"
  };
#undef TUNABLE
  return kRows;
}

}  // namespace mlacheck::gpu::fast
