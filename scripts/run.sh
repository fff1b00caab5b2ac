#!/usr/bin/env bash
# Set-up and the main job on the built-in default data: installs the Debian packages, builds
# mlacheck (GPU backend MLACHECK_GPU, default auto: cuda where nvcc exists), then runs
# `mlacheck verify` on the standard tier (data/cases/standard.txt: harness shapes, ragged, paged,
# q_len 2/4, profiles; README "Case tiers").
# Usage: scripts/run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
# Its own folder: scripts/test.sh builds the CPU-only configuration in build/test, and sharing one
# folder made running the two README commands in order reconfigure and rebuild everything.
build=${1:-build/run}

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLACHECK_GPU="${MLACHECK_GPU:-auto}"
cmake --build "$build" -j "$(nproc)"
mlacheck="$build/cli/mlacheck"

"$mlacheck" --version
"$mlacheck" list
# The main job: every GPU strategy on the default case list (the 8 harness shapes) through the
# gate. Without a usable GPU it says so once and still checks the CPU side (reference + the gate's
# power against an all-zero output).
"$mlacheck" verify
