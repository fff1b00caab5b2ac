#!/bin/bash
# On the GPU machine (carried with the checkout, e.g. as .anchors/seeds): the competition submissions
# run and timed by bench.py with the machine's torch and triton. Results in $OUT/seed-report.md and
# seed-results.jsonl. Extra arguments go to bench.py (e.g. --shapes bs4_kv1024).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/seed_out}
mkdir -p "$OUT"
seeds=()
for f in "$HERE"/seeds/*.txt; do seeds+=(--seed "$f"); done
((${#seeds[@]} > 0)) || { echo "run.sh: no seed files in $HERE/seeds" >&2; exit 2; }
python3 "$HERE/bench.py" "${seeds[@]}" --out "$OUT" "$@"
