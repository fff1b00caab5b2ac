#!/bin/bash
# Builds libflashmla_decode.so (capi.cu's C interface to FlashMLA's dense bf16 decode, sm_90a) for
# bench.py, from a FlashMLA checkout whose csrc/cutlass holds its CUTLASS submodule.
#   FLASHMLA_DIR=/path/to/FlashMLA bash scripts/flashmla-bench/build.sh OUT_DIR
# OUT_DIR (e.g. .anchors/fmla, git-ignored, carried to the GPU machine) receives the library,
# bench.py and run.sh. nvcc 13 (CUDA_HOME or /usr/local/cuda); no torch needed here.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT_DIR=${1:?usage: FLASHMLA_DIR=... build.sh OUT_DIR}
SRC=${FLASHMLA_DIR:?set FLASHMLA_DIR to a FlashMLA checkout}/csrc
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
for f in sm90/decode/dense/instantiations/bf16.cu smxx/decode/combine/combine.cu \
         smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu cutlass/include/cute/tensor.hpp; do
  [[ -f "$SRC/$f" ]] || { echo "build.sh: $SRC/$f missing (a FlashMLA checkout with its cutlass submodule?)" >&2; exit 2; }
done
mkdir -p "$OUT_DIR"
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
# FlashMLA's own compile flags for its sm90 sources (setup.py), less the torch ones.
# shellcheck disable=SC2054  # -gencode's value holds commas
FLAGS=(-O3 -std=c++20 -DNDEBUG -D_USE_MATH_DEFINES -DFLASH_MLA_DISABLE_FP16 -Wno-deprecated-declarations
       -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_HALF2_OPERATORS__
       -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math
       --ptxas-options=--register-usage-level=10 -gencode arch=compute_90a,code=sm_90a -Xcompiler -fPIC
       -I"$SRC" -I"$SRC/kerutils/include" -I"$SRC/sm90" -I"$SRC/cutlass/include")
i=0
pids=()
for f in sm90/decode/dense/instantiations/bf16.cu smxx/decode/combine/combine.cu \
         smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu "$HERE/capi.cu"; do
  [[ $f = /* ]] || f="$SRC/$f"
  echo "nvcc $f"
  "$NVCC" "${FLAGS[@]}" -c "$f" -o "$OBJ/$i.o" &
  pids+=($!)
  i=$((i + 1))
done
# Each compile's own status: a bare `wait` returns 0 whatever the jobs did.
for pid in "${pids[@]}"; do wait "$pid" || { echo "build.sh: a compile failed (above)" >&2; exit 1; }; done
"$NVCC" -shared -cudart shared -o "$OUT_DIR/libflashmla_decode.so" "$OBJ"/*.o
cp "$HERE/bench.py" "$HERE/run.sh" "$OUT_DIR/"
# FLASHMLA_COMMIT names the sources of a checkout without .git (e.g. a `git archive` of a mirror).
echo "${FLASHMLA_COMMIT:-$(cd "$FLASHMLA_DIR" && git rev-parse HEAD 2>/dev/null || echo unknown)}" > "$OUT_DIR/flashmla.commit"
echo "built $OUT_DIR/libflashmla_decode.so ($(du -h "$OUT_DIR/libflashmla_decode.so" | cut -f1))"
