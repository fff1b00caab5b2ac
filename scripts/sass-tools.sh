#!/usr/bin/env bash
# cuobjdump and nvdisasm on this machine, from NVIDIA's own PyPI wheels (nvidia-cuda-cuobjdump,
# nvidia-cuda-nvdisasm): the Debian image's CUDA 13 has nvcc and ptxas but neither, so reading an
# sm_90a build's SASS took a device call. Unpacked (not installed) into DEST/bin; nothing else changes.
#   scripts/sass-tools.sh [DEST]        (default build/sass-tools; prints DEST/bin)
# Then e.g.:
#   PATH=$(scripts/sass-tools.sh):$PATH cuobjdump -sass build/ci-cuda/gpu/CMakeFiles/mlacheck_gpu.dir/hopper/attention.hip.o > a.sass
#   scripts/sass-loops.py a.sass --kernel hopper_attention_kernel --products 34 --histogram
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build/sass-tools}
if [[ ! -x "$dest/bin/cuobjdump" || ! -x "$dest/bin/nvdisasm" ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m venv "$work/venv"  # its own pip: Debian's python3 has none (scripts/test.sh makes a venv too)
  "$work/venv/bin/pip" download -q --no-deps --disable-pip-version-check -d "$work" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2
  mkdir -p "$dest/bin"
  for wheel in "$work"/*.whl; do
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$work/x"
  done
  for tool in cuobjdump nvdisasm; do
    found=$(find "$work/x" -type f -name "$tool" | head -1)
    [[ -n "$found" ]] || { echo "sass-tools.sh: no $tool in the wheels" >&2; exit 1; }
    install -m 755 "$found" "$dest/bin/$tool"
  done
fi
echo "$PWD/$dest/bin"
