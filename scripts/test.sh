#!/usr/bin/env bash
# The whole test suite: builds mlacheck (CPU build; GPU tests skip with a message when no GPU is
# usable) and runs every CTest test — the GoogleTest suite through `mlacheck selftest`, the CLI
# tests and the Python interop check (safetensors + NumPy from PyPI, in a venv under the build).
# Usage: scripts/test.sh [build-dir]   (env: MLACHECK_GPU=none|cuda|hip|auto, MLACHECK_WERROR=ON|OFF)
set -euo pipefail
cd "$(dirname "$0")/.."
# Its own folder (scripts/run.sh uses build/run with the GPU backend): see run.sh.
build=${1:-build/test}
jobs=$(nproc)

venv="$build/venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import safetensors, numpy, xxhash, ml_dtypes' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check safetensors numpy xxhash ml_dtypes
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLACHECK_GPU="${MLACHECK_GPU:-none}" -DMLACHECK_WERROR="${MLACHECK_WERROR:-OFF}" \
  -DMLACHECK_PYTHON="$PWD/$venv/bin/python"
cmake --build "$build" -j "$jobs"
# The standard and full case tiers' CPU side takes minutes on 2 cores: label `long`, run on demand
# (`ctest --test-dir build/test -L tier-standard`; README "Case tiers").
ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE long
