#pragma once
// The Hopper family's entry in the table of families (gpu/family.h, gpu/families.cpp).
#include "gpu/family.h"

namespace mlacheck::gpu::hopper {

const Family& family();

}  // namespace mlacheck::gpu::hopper
