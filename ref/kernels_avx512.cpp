// The kernels of ref/kernels.h for AVX-512 (-mavx512f), with
// MLACHECK_REF_ISA=isa_avx512 (ref/CMakeLists.txt sets both for this file).
#include "ref/kernels_impl.inc"

namespace mlacheck::ref {
const Kernels& kernels_avx512() { return isa_avx512::make_kernels(Isa::avx512); }
}  // namespace mlacheck::ref
