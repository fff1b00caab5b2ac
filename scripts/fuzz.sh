#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (the configuration of scripts/sanitized-build.sh: clang-22,
# ASan + UBSan, coverage; shared with scripts/sanitize.sh given the same build directory) and runs
# each for a bounded time from a copy of its committed seed corpus fuzz/corpus/<target>/ (the
# copy grows; the committed corpus is never written). Each run starts by replaying every corpus
# input, so an input added there after a crash is checked on every run from then on.
# A crash, leak, sanitizer report or timeout fails the script and says where the input is saved.
# Usage: scripts/fuzz.sh [build-dir] [seconds-per-target]   (default build/sanitize, 60 s)
# Targets run side by side, as many at a time as there are cores (2 cores: 4 targets take
# 2 x seconds-per-target of wall time). After scripts/sanitize.sh in the same directory the build
# adds only the targets (16 s); alone it also builds the libraries and cli/ objects they link.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/sanitize}
seconds=${2:-60}
cores=$(nproc)
source scripts/sanitized-build.sh

configure_sanitized "$build"
SECONDS=0
cmake --build "$build" --target fuzz -j "$cores"
echo "fuzz: build took ${SECONDS} s"

# target, -max_len (above its largest seed: the golden seeds are ~56 KB), dictionary.
targets=(
  "safetensors_reader 65536 safetensors"
  "golden_reader 65536 safetensors"
  "case_list 4096 case_list"
  "manifest 8192 manifest"
)
# One thread: the targets' inputs are tiny, and OpenMP workers only add noise to each run.
export OMP_NUM_THREADS=1

run_target() {
  local name=$1 max_len=$2 dict=$3
  local work="$build/fuzz-run/$name"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp fuzz/corpus/"$name"/* "$work/corpus/"
  local status=0
  "$build/fuzz/fuzz_$name" "$work/corpus" -dict="fuzz/dict/$dict.dict" -max_len="$max_len" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" \
    -print_final_stats=1 >"$work/log" 2>&1 || status=$?
  echo "$status" >"$work/status"
}

SECONDS=0
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= cores)); do wait -n || true; done
  run_target $t &
done
wait
echo "fuzz: runs took ${SECONDS} s (${seconds} s per target)"

failed=0
for t in "${targets[@]}"; do
  read -r name _ <<<"$t"
  work="$build/fuzz-run/$name"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo "?")
  if [[ $(cat "$work/status") == 0 ]]; then
    echo "fuzz: $name ok ($runs runs)"
    continue
  fi
  failed=1
  echo "fuzz: $name FAILED (exit $(cat "$work/status")); the end of $work/log:"
  tail -n 60 "$work/log"
  for input in "$work"/artifacts/*; do
    [[ -e $input ]] || continue
    echo "fuzz: the input is saved as $input"
    echo "fuzz:   reproduce: $build/fuzz/fuzz_$name $input"
    echo "fuzz:   once fixed, add it to fuzz/corpus/$name/ so every later run replays it"
  done
done
exit "$failed"
