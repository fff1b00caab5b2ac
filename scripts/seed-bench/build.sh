#!/usr/bin/env bash
# Builds the carryable bundle of scripts/seed-bench (README.md): the seed files and this folder's
# bench.py and run.sh.
#   bash scripts/seed-bench/build.sh DEST [SEEDS_DIR]     (e.g. .anchors/seeds; default ../shared/seeds)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:?usage: scripts/seed-bench/build.sh DEST [SEEDS_DIR]}
seeds=${2:-$here/../../../shared/seeds}
compgen -G "$seeds/*.txt" > /dev/null || { echo "build.sh: no seed files (*.txt) in $seeds" >&2; exit 1; }
mkdir -p "$dest/seeds"
cp "$seeds"/*.txt "$dest/seeds/"
cp "$here/bench.py" "$here/run.sh" "$here/README.md" "$dest/"
echo "build.sh: $dest with $(ls "$dest/seeds" | wc -l) seed files"
