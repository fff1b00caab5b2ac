#pragma once
// A report line for the one known gap of the schedule-free kernel bound (check/tolerance.h
// schedule_free_bound): it widens the emulation's float32 sums for any split plan, but fp8-acc
// tc64 / tc sums run through ref/fp8_mma.h's truncating model in runs that start at each split's
// first key, so another plan cuts the model's truncations elsewhere, and nothing in the bound covers
// that. RapidCheck found a correct 3-split schedule beyond it (docs/PERF.md, "fp8 tensor-core
// accumulation through the gate"); with the schedule declared the tight bound replays the kernel's
// own runs. The verdict stands either way: this only says where to look.
#include <optional>
#include <string>

#include "check/gate.h"
#include "problem/recipe.h"

namespace mlacheck::cli {

// When the recipe sums fp8 products as a tensor core (fp8-acc tc64 / tc), no schedule was declared,
// and the schedule-free kernel bound is the criterion that failed (the total bound held): a line
// saying so and naming --schedule.
std::optional<std::string> tensor_core_sums_hint(const problem::Recipe& recipe, bool schedule_declared,
                                                 const check::GateReport& report);

}  // namespace mlacheck::cli
