#!/usr/bin/env bash
# A CUDA build's files that a device call needs, in a folder small enough to carry (a build folder
# is about 80 MB; a call carries at most 64 MiB with the tree): mlacheck, racecheck's two
# reproducers (scripts/device-check.sh checks them), the probe docs/probes/decode_floor.cu built for
# sm_90a (scripts/device-ledger.sh runs it) and the runtime libraries the device image may lack
# (device-check.sh puts runtime-libs on LD_LIBRARY_PATH when one is missing there).
#   scripts/device-carry.sh BUILD_DIR [DEST]      (DEST default build-dev: ignored by git, /build*/)
# Then carry DEST and run e.g. `scripts/device-check.sh DEST` or `scripts/bf16-bar.sh DEST` there.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/device-carry.sh BUILD_DIR [DEST]}
dest=${2:-build-dev}
[[ -x "$build/cli/mlacheck" ]] || { echo "device-carry.sh: no $build/cli/mlacheck (build it first)" >&2; exit 2; }
grep -q '^MLACHECK_GPU:STRING=cuda$' "$build/CMakeCache.txt" 2> /dev/null ||
  { echo "device-carry.sh: $build is not a CUDA build (-DMLACHECK_GPU=cuda)" >&2; exit 2; }
git check-ignore -q "${dest%/}/" || { echo "device-carry.sh: $dest is not ignored by git (it would travel twice)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest/cli" "$dest/gpu" "$dest/probes" "$dest/runtime-libs"
cp "$build/cli/mlacheck" "$dest/cli/"
for repro in racecheck_handoff_repro racecheck_cluster_exclude_repro; do
  if [[ -x "$build/gpu/$repro" ]]; then cp "$build/gpu/$repro" "$dest/gpu/"; else echo "device-carry.sh: no $build/gpu/$repro"; fi
done
# The probe's flags are its own header's (docs/probes/decode_floor.cu); nvcc is there in a CUDA build.
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a docs/probes/decode_floor.cu -o "$dest/probes/decode_floor"
# libgomp: g++'s OpenMP runtime, not on every CUDA image (libstdc++ is).
gomp=$(ldd "$build/cli/mlacheck" | awk '$1 == "libgomp.so.1" { print $3 }')
if [[ -n "$gomp" ]]; then cp "$gomp" "$dest/runtime-libs/"; fi
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo '+changes')" > "$dest/commit.txt"
du -sh "$dest"
