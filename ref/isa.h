#pragma once
// The reference's hot loops (normal draws, the fixed-order products) are compiled three times, for
// AVX-512, AVX2 and baseline x86-64 (ref/kernels_*.cpp), and the best one the CPU runs is picked
// at run time. All three compute each output with the same IEEE operations in the same order (the
// vectors only run independent outputs side by side, and nothing is contracted into an FMA), so
// they give the same bits; tests/ref/kernels_test.cpp checks it on the machine at hand.
//
// MLACHECK_REF_ISA names the instruction set of the translation unit being compiled. Inline code
// that differs per instruction set lives in `inline namespace MLACHECK_REF_ISA`, so the AVX-512
// copy of an inline function can never be merged by the linker into the baseline path (the ODR
// trap of compiling one header with several -m flags; Highway's HWY_NAMESPACE does the same).
#ifndef MLACHECK_REF_ISA
#define MLACHECK_REF_ISA isa_baseline
#endif

namespace mlacheck::ref {

enum class Isa { baseline, avx2, avx512 };

// The widest instruction set the running CPU supports (and the OS enables).
Isa best_isa();
const char* to_string(Isa);

}  // namespace mlacheck::ref
