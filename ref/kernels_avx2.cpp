// The kernels of ref/kernels.h for AVX2 (-mavx2; no FMA: nothing is contracted), with
// MLACHECK_REF_ISA=isa_avx2 (ref/CMakeLists.txt sets both for this file).
#include "ref/kernels_impl.inc"

namespace mlacheck::ref {
const Kernels& kernels_avx2() { return isa_avx2::make_kernels(Isa::avx2); }
}  // namespace mlacheck::ref
