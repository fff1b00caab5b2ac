#!/usr/bin/env bash
# `mlacheck drift --case C --strategy S` on the GPU (issue 9 item 4d), both ways; run by
# scripts/device-check.sh (drift.log).
#   - correct runs: strategies of both families and every schedule, on cases with split-K, chunked
#     plans, pages, q_len 2 and 4, base-2 LSEs, fp8 and MXFP4 Q: every intermediate captured from
#     the workspace must be present where the strategy has it and within its bound (exit 0);
#   - with MUTANT_BIN (a -DMLACHECK_MUTANTS=ON build): planted faults, each of which drift must
#     localize to the stage it is in (the first failing stage of --json's report).
# Usage: scripts/drift-capture-check.sh BIN OUTDIR [MUTANT_BIN]
set -uo pipefail
bin=${1:?usage: BIN OUTDIR [MUTANT_BIN]}
out=${2:?usage: BIN OUTDIR [MUTANT_BIN]}
mutant_bin=${3:-}
mkdir -p "$out"
status=0

first_failure() {  # the --json report's first failing stage, or "none"
  python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["first_failure"]; print(f or "none")' "$1"
}
present() {  # the stages the report had data for, comma-separated
  python3 -c 'import json, sys; print(",".join(s["stage"] for s in json.load(open(sys.argv[1]))["stages"] if s["present"]))' "$1"
}

# strategy case
correct=(
  "a16w16/split-k/mma bs4_kv1024"
  "a16w16/persistent/mma ragged_bs24_kv700"
  "a4w4/split-k/mma q2_bs32_kv1024"
  "a4w4/persistent/mma q4_ragged_p64_bs12_kv300"
  "a8w8/split-k/mma paged_p16_bs32_kv2000"
  "a8w8-cast/persistent/mma q2_ragged_p16_bs12_kv300"
  "a16w8/split-k/portable peaked_bs4_kv2048"
  "a16w4/single-pass/portable outliers_bs8_kv1024"
)
for pair in "${correct[@]}"; do
  read -r strategy case <<< "$pair"
  tag="$case.${strategy//\//_}"
  "$bin" drift --case "$case" --strategy "$strategy" --capture "$out/capture" --json "$out/$tag.json" \
    > "$out/$tag.log" 2>&1
  rc=$?
  if ((rc == 0)); then
    echo "ok    $strategy on $case: stages $(present "$out/$tag.json")"
  else
    echo "FAIL  $strategy on $case: exit $rc, first failing stage $(first_failure "$out/$tag.json" 2>/dev/null) ($out/$tag.log)"
    tail -n 25 "$out/$tag.log"
    status=1
  fi
done

if [[ -n "$mutant_bin" ]]; then
  # fault strategy case expected-first-failing-stage
  faults=(
    "equal-weight-merge a16w16/split-k/mma bs4_kv1024 merge"
    "fp8-q-scale-one-block a8w8/split-k/mma bs4_kv1024 Q codes"
    "mxfp4-q-amax-skips-last a4w4/split-k/mma bs4_kv1024 Q codes"
    "dropped-partial-tile a16w16/split-k/mma ragged_bs24_kv700 split partials"
    "unrescaled-accumulator a8w8/split-k/mma bs32_kv1024 split partials"
    "skipped-rope-dims a16w16/persistent/mma bs4_kv1024 split partials"
    "lse-in-base2 a16w16/split-k/mma bs4_kv1024 lse"
    "persistent-partials-unscaled a16w16/persistent/mma q2_bs32_kv1024 split partials"
  )
  for entry in "${faults[@]}"; do
    read -r fault strategy case expected <<< "$entry"
    tag="mutant-$fault"
    "$mutant_bin" drift --case "$case" --strategy "$strategy" --mutant "$fault" --capture "$out/capture-mutants" \
      --json "$out/$tag.json" > "$out/$tag.log" 2>&1
    rc=$?
    got=$(first_failure "$out/$tag.json" 2>/dev/null || echo "no report")
    if ((rc == 1)) && [[ "$got" == "$expected" ]]; then
      echo "ok    $fault in $strategy on $case: localized to '$got'"
    else
      echo "FAIL  $fault in $strategy on $case: exit $rc, first failing stage '$got', expected '$expected' ($out/$tag.log)"
      tail -n 25 "$out/$tag.log"
      status=1
    fi
  done
fi
exit "$status"
