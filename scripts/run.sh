#!/usr/bin/env bash
# Set-up and the main job on the built-in default data: installs the Debian packages, builds
# mlacheck (GPU backend MLACHECK_GPU, default auto: cuda where nvcc exists), then quantizes the
# built-in KV rows (data/oracles: competition-shaped randn*0.02 KV) into every cache format the
# harness used and prints the formats and recipes.
# Usage: scripts/run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out="$build/out"

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLACHECK_GPU="${MLACHECK_GPU:-auto}"
cmake --build "$build" -j "$(nproc)"
mlacheck="$build/cli/mlacheck"

"$mlacheck" --version
"$mlacheck" list
mkdir -p "$out"
in=data/oracles/mla_quant_oracle_v1.safetensors
for fmt in fp8-harness-e4m3fn fp8-harness-e4m3fnuz mxfp4; do
  "$mlacheck" quant --format "$fmt" --tensor mxfp4_comp__x "$in" "$out/kv_$fmt.safetensors"
  echo "wrote $out/kv_$fmt.safetensors"
done
