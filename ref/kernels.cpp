#include "ref/kernels.h"

namespace mlacheck::ref {

Isa best_isa() {
  // __builtin_cpu_supports checks CPUID and that the OS saves the wider registers.
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::avx2;
  return Isa::baseline;
}

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::baseline: return "baseline";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

const Kernels* kernels_for(Isa isa) {
  const Isa best = best_isa();
  switch (isa) {
    case Isa::baseline: return &kernels_baseline();
    case Isa::avx2: return best != Isa::baseline ? &kernels_avx2() : nullptr;
    case Isa::avx512: return best == Isa::avx512 ? &kernels_avx512() : nullptr;
  }
  return nullptr;
}

const Kernels& kernels() {
  static const Kernels& chosen = *kernels_for(best_isa());
  return chosen;
}

}  // namespace mlacheck::ref
