#!/usr/bin/env bash
# Builds the carryable bundle of scripts/sglang-bench (README.md): the two files of sglang's Triton
# MLA decode from its PyPI wheel, and this folder's bench.py and run.sh.
#   bash scripts/sglang-bench/build.sh DEST      (e.g. .anchors/sgl; SGLANG_VERSION, default 0.5.23)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:?usage: scripts/sglang-bench/build.sh DEST}
version=${SGLANG_VERSION:-0.5.23}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: "sglang==$version" -d "$tmp"
wheel=$(ls "$tmp"/sglang-*.whl)
mkdir -p "$dest/src"
for f in decode_attention.py score_mod.py; do
  unzip -p "$wheel" "sglang/kernels/ops/attention/$f" > "$dest/src/$f"
  [[ -s $dest/src/$f ]] || { echo "build.sh: $f not in $(basename "$wheel")" >&2; exit 1; }
done
cp "$here/bench.py" "$here/run.sh" "$here/README.md" "$dest/"
echo "$(basename "$wheel") sha256 $(sha256sum "$wheel" | cut -d' ' -f1)" > "$dest/sglang.version"
echo "build.sh: $dest from $(cat "$dest/sglang.version")"
