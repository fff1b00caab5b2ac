// The kernels of ref/kernels.h for baseline x86-64 (SSE2), with
// MLACHECK_REF_ISA=isa_baseline (ref/CMakeLists.txt sets both for this file).
#include "ref/kernels_impl.inc"

namespace mlacheck::ref {
const Kernels& kernels_baseline() { return isa_baseline::make_kernels(Isa::baseline); }
}  // namespace mlacheck::ref
