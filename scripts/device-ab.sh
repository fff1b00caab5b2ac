#!/usr/bin/env bash
# Two builds against each other in one device call, on whatever card comes: `mlacheck bench --graph`
# of each alternated twice (OLD NEW OLD NEW, so that a drift of the card's clock falls on both), then
# scripts/bench-ab.py, then NEW's checks. What sessions wrote as a throw-away script per branch.
#   scripts/device-ab.sh OLD_BUILD NEW_BUILD   (each a folder from scripts/device-carry.sh; carry both)
# Rows timed (environment, each with its default):
#   AB_SPLITK_STRATEGIES   a16w16, a16w8, a8w8-cast, a16w4 and a4w4 hopper split-K
#   AB_SPLITK_CASES        bs4_kv1024,bs4_kv8192,bs32_kv1024,bs64_kv1024 (the harness list's names)
#   AB_LAYOUT_STRATEGIES   a16w16, a16w8, a16w4 and a4w4 hopper persistent, timed with --plan-once
#   AB_LAYOUT_CASES        ragged_bs32_kv4096,ragged_bs256_kv4096,uniform_bs32_kv881,uniform_bs256_kv996
#                          (data/cases/layout_cost.txt); an empty AB_*_STRATEGIES skips its rows
# NEW's checks: AB_CHECK_TESTS (gtest filter, default the merge, hopper, determinism, plan-reuse and
# hopper decode tests), then `verify` of AB_CHECK_STRATEGIES (default '*/hopper') on the standard
# tier and on data/cases/ragged.txt, then memcheck of the GPU merge tests; AB_CHECKS=0 skips them.
# OUT (default device-ab-out) gets two files, so that OUT=$OUT/ab fits the device tool's 8 returned
# files: ab.txt (the tables and the checks' last lines; also printed) and all.tgz (ab.txt and each
# run's JSON and log, kept until then in a folder of their own; packed on exit, also when a timeout's
# TERM ends the script early).
# Exit 1 when a bench run or a check fails, 2 on bad arguments.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
old=${1:?usage: scripts/device-ab.sh OLD_BUILD NEW_BUILD}
new=${2:?usage: scripts/device-ab.sh OLD_BUILD NEW_BUILD}
for b in "$old" "$new"; do
  [[ -x $b/cli/mlacheck ]] || { echo "device-ab.sh: no binary at $b/cli/mlacheck" >&2; exit 2; }
done
out=${OUT:-device-ab-out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
runs=$(mktemp -d)
pack() { cp "$out/ab.txt" "$runs/" 2> /dev/null; tar -czf "$out/all.tgz" -C "$runs" . 2> /dev/null; rm -rf "$runs"; }
trap pack EXIT
# A step runs in the background and is waited for, so that a TERM (an outer timeout's) ends it and
# the script at once: bash defers a trap until a foreground child exits, and each step's own timeout
# puts it in a process group that an outer timeout's signal does not reach.
step_pid=
# The trap ignores any TERM after the first (timeout signals the script and then its whole process
# group: a second TERM during the exit trap's packing ended it before all.tgz was written, seen in CI).
trap 'trap "" TERM; [[ -n $step_pid ]] && kill -TERM "$step_pid" 2> /dev/null; exit 143' TERM
timed() {  # seconds log command...: the command under timeout, its output in log; its exit status
  local seconds=$1 log=$2
  shift 2
  timeout "$seconds" "$@" > "$log" 2>&1 &
  step_pid=$!
  wait "$step_pid"
  local rc=$?
  step_pid=
  return $rc
}
export MLACHECK_DATA_DIR=${MLACHECK_DATA_DIR:-$PWD/data}
splitk=${AB_SPLITK_STRATEGIES-a16w16/split-k/hopper,a16w8/split-k/hopper,a8w8-cast/split-k/hopper,a16w4/split-k/hopper,a4w4/split-k/hopper}
splitk_cases=${AB_SPLITK_CASES:-bs4_kv1024,bs4_kv8192,bs32_kv1024,bs64_kv1024}
layout=${AB_LAYOUT_STRATEGIES-a16w16/persistent/hopper,a16w8/persistent/hopper,a16w4/persistent/hopper,a4w4/persistent/hopper}
layout_cases=${AB_LAYOUT_CASES:-ragged_bs32_kv4096,ragged_bs256_kv4096,uniform_bs32_kv881,uniform_bs256_kv996}
tests=${AB_CHECK_TESTS:-*Merge*:*merge*:GpuHopper*:GpuDeterminism*:GpuPlanReuse*:Gpu/GpuDecode.*hopper*}
check_strategies=${AB_CHECK_STRATEGIES:-*/hopper}
status=0
report="$out/ab.txt"
: > "$report"
say() { echo "$*" | tee -a "$report"; }
say "card: $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -n 1)"
say "old: $old ($(cat "$old/commit.txt" 2>/dev/null || echo "no commit.txt")), new: $new ($(cat "$new/commit.txt" 2>/dev/null || echo "no commit.txt"))"
bench() {  # build side run kind
  local args=(bench --graph --reps 30 --json "$runs/$4-$2-$3.json")
  if [[ $4 == splitk ]]; then
    args+=(--strategy "$splitk" --case "$splitk_cases")
  else
    args+=(--plan-once --strategy "$layout" --case-list data/cases/layout_cost.txt --case "$layout_cases")
  fi
  timed 150 "$runs/$4-$2-$3.log" "$1/cli/mlacheck" "${args[@]}" ||
    { say "FAIL: bench $4 $2 run $3 (exit $?; all.tgz: $4-$2-$3.log)"; status=1; return; }
  [[ -s $runs/$4-$2-$3.json ]] ||
    { say "FAIL: bench $4 $2 run $3 wrote no JSON: $(tail -n 1 "$runs/$4-$2-$3.log")"; status=1; }
}
kinds=()
[[ -n $splitk ]] && kinds+=(splitk)
[[ -n $layout ]] && kinds+=(layout)
for run in 1 2; do
  for kind in "${kinds[@]}"; do bench "$old" old $run "$kind"; bench "$new" new $run "$kind"; done
done
for kind in "${kinds[@]}"; do
  say "== $kind rows"
  python3 scripts/bench-ab.py --old "$runs/$kind-old-1.json,$runs/$kind-old-2.json" \
    --new "$runs/$kind-new-1.json,$runs/$kind-new-2.json" --names old,new 2>&1 | tee -a "$report" ||
    status=1
done
check() {  # name seconds command...
  local name=$1 seconds=$2
  shift 2
  timed "$seconds" "$runs/$name.log" "$@"
  local rc=$?
  say "$name: exit $rc; $(grep -E 'PASSED|FAILED|passed|ERROR SUMMARY' "$runs/$name.log" | tail -n 1)"
  [[ $rc == 0 ]] || status=1
}
if [[ ${AB_CHECKS:-1} != 0 ]]; then
  say "== checks of new"
  check selftest 200 "$new/cli/mlacheck" selftest --gtest_filter="$tests"
  check verify 200 "$new/cli/mlacheck" verify --strategy "$check_strategies"
  check verify-ragged 120 "$new/cli/mlacheck" verify --case-list data/cases/ragged.txt --strategy "$check_strategies"
  if command -v compute-sanitizer > /dev/null; then
    check memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 1 "$new/cli/mlacheck" selftest \
      --gtest_filter='GpuMerge*:GpuClusterMerge*'
  else
    say "memcheck: compute-sanitizer not found, not run"
  fi
fi
exit $status
