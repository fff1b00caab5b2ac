#!/bin/bash
# On the GPU machine (carried with the checkout, e.g. as .anchors/fmla): FlashMLA's dense bf16
# decode timed by bench.py with the machine's torch and triton. Results in $OUT/fmla-report.md and
# fmla-results.jsonl. Extra arguments go to bench.py (e.g. --shapes bs256_kv8192).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/fmla_out}
mkdir -p "$OUT"
echo "FlashMLA $(cat "$HERE/flashmla.commit" 2>/dev/null)"
python3 "$HERE/bench.py" --lib "$HERE/libflashmla_decode.so" --out "$OUT" "$@"
