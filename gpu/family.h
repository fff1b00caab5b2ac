#pragma once
// A kernel family: one folder of gpu/ (portable/, fast/) with its own kernels, its own answer to
// "do you run this problem", its own split rule and its own launcher. A registry row names its
// family (gpu/registry.h) and everything a strategy does beyond the common checks goes through the
// family's entries: no dispatch on names, no default family. What the families share (argument
// structs, Q quantization, the merge, the work list, operand decoding) is gpu/common/.
//
// Plain C++: the table of families exists in every build; a family's launcher is there only where
// its kernels are compiled (a GPU runtime, and a vendor the family is built for).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpu/common/args.h"
#include "gpu/params.h"
#include "problem/batch.h"
#include "problem/recipe.h"
#include "problem/split_plan.h"

namespace mlacheck::gpu {

struct Strategy;
struct Tunables;
enum class Schedule : uint8_t;

enum class FamilyId : uint8_t { portable, mma, hopper };

// The vendors whose GPUs a family's kernels are compiled for (cmake/MlacheckGpu.cmake compiles a
// family's device sources only for these; `mlacheck list` prints them).
struct Vendors {
  bool nvidia = false;
  bool amd = false;
};

// What the host knows of a batch when it plans a launch (DecodeParams' host-side fields): no
// device-to-host copy is needed to choose a split plan.
struct BatchShape {
  int64_t num_requests = 0;
  int64_t max_kv_len = 0;
  int64_t total_kv = 0;
};

// Queues the whole decode of strategy `s` (Q quantization, attention, merge) on `stream`: no
// allocation, no host synchronization, so a call can be captured in a graph. Throws
// std::invalid_argument for params that do not fit the strategy, gpu::Error when the runtime
// refuses a launch.
using Launcher = void (*)(const Strategy& s, const DecodeParams& params, StreamHandle stream);

struct Family {
  FamilyId id = FamilyId::portable;
  std::string_view name;     // the strategy names' last component
  std::string_view summary;  // one line for `mlacheck list`
  Vendors vendors;
  // How its split-K merges weigh the splits (gpu/common/merge_weights.h); its launcher passes it to
  // the merge, `mlacheck list` prints it.
  common::MergeWeights merge_weights = common::MergeWeights::emulated;
  // The softmax base every kernel of the family computes in, or nullopt for the recipe's own; the
  // registry writes it into each of the family's strategies, so that the emulation replays it.
  std::optional<problem::SoftmaxBase> softmax_base = std::nullopt;
  // Why the family does not run strategy s on this batch (its recipe, schedule and tunables), or
  // nullopt; the registry's checks that every family shares (cache format, rows, split limits)
  // come first (Strategy::supports).
  std::optional<std::string> (*supports)(const Strategy& s, const problem::Batch& batch) = nullptr;
  // The split plan a launch of strategy s runs on a batch of this shape on a device with
  // `multiprocessors` SMs / CUs; the emulated reference must run the same plan.
  problem::SplitPlan (*split_plan)(const Strategy& s, const BatchShape& shape,
                                   int multiprocessors) = nullptr;
  // What a build of the right vendor must also have for the family's kernels, in words ("" for
  // nothing more), for not_built_here.
  std::string_view build_requirement;
  // nullptr when this build has not compiled the family's kernels (see built_here).
  Launcher launcher = nullptr;
};

const Family& family(FamilyId id);
// Every family, in FamilyId order.
std::span<const Family* const> families();

// Whether this build compiled the family's kernels, and if not, why, in words ("built without a
// GPU runtime", "built for AMD (HIP); the family is NVIDIA-only").
std::optional<std::string> not_built_here(const Family& f);

// "NVIDIA and AMD", "NVIDIA only", "AMD only".
std::string vendors_text(const Vendors& v);

// A family's merge weights in words, for `mlacheck list`.
std::string_view merge_weights_text(common::MergeWeights w);

}  // namespace mlacheck::gpu
