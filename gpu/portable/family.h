#pragma once
// The portable family's entry in the table of families (gpu/family.h, gpu/families.cpp).
#include "gpu/family.h"

namespace mlacheck::gpu::portable {

const Family& family();

}  // namespace mlacheck::gpu::portable
