#pragma once
// The mma family's entry in the table of families (gpu/family.h, gpu/families.cpp).
#include "gpu/family.h"

namespace mlacheck::gpu::fast {

const Family& family();

}  // namespace mlacheck::gpu::fast
