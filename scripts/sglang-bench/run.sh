#!/bin/bash
# On the GPU machine (carried with the checkout, e.g. as .anchors/sgl): sglang's Triton MLA decode
# timed by bench.py with the machine's torch and triton. Results in $OUT/sgl-report.md and
# sgl-results.jsonl. Extra arguments go to bench.py (e.g. --shapes bs4_kv1024 --formats fp8).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/sgl_out}
mkdir -p "$OUT"
echo "sglang $(cat "$HERE/sglang.version" 2>/dev/null)"
python3 "$HERE/bench.py" --src "$HERE/src" --out "$OUT" "$@"
