#!/usr/bin/env bash
# Issue 10's H200 measurements in one device call (its steps' caps add up to about 8 minutes; on an
# H100 the whole ran in 92-110 s: docs/PERF.md, call 5 of 2026-12-07's twenty-sixth session and ask 9
# of 2026-12-08's thirty-fourth), for sessions whose device time is short: the binary checked first
# on the hopper strategies it times, then
#   verify-quick.log  mlacheck verify --tier quick of every hopper strategy
#   fused-test.log    the GPU tests of the merge in the kernel's clusters (every recipe, bit for bit
#                     against the merge kernel)
#   merge-1.log/json  bench --graph of every recipe's hopper split-K on the 8 harness shapes, each row
#                     with the family's rule and with the merge in the clusters (`--merge rule,cluster`)
#   bar/              scripts/bf16-bar.sh on the bf16 hopper strategies with FlashInfer and FlashMLA
#                     beside them (a missing one skipped, saying so; with neither, no table: the
#                     step fails)
#   persist.log/json  the fp8 persistent rows at 64 x 8192 and 256 x 8192, plan reused
#   splits.log/json   the all-fp8 split-K at 64 x 8192 with 2, 3 and 4 splits merged in the clusters
#   floor.log         docs/probes/decode_floor.cu (built by scripts/device-carry.sh): what the bytes
#                     and launches alone cost the 4 x 1024 and 64 x 8192 grids on this card
#   merge-2.log/json  merge-1 again, so that a drift of the machine shows as a range
# and everything in $OUT/ledger.tgz (a device call hands back at most 8 files), beside summary.txt.
#
# Here: `cmake --build BUILD --target cli/mlacheck` (-DMLACHECK_GPU=cuda), `scripts/device-carry.sh
# BUILD build-dev`, and for the bar .anchors/fi and .anchors/fmla (the top of scripts/bf16-bar.sh).
# There (carry build-dev, .anchors/fi, .anchors/fmla): `scripts/device-ledger.sh build-dev`.
# Environment: LEDGER_BUDGET_S (default 500: each step is capped by what is left of it), OUT.
# Compare merge-1/-2 rows with scripts/bench-ab.py, judge the bar with bar/bar.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${1:?usage: scripts/device-ledger.sh BUILD_DIR [FLASHINFER_DIR] [FLASHMLA_DIR]}
fi_dir=${2:-.anchors/fi}
fmla_dir=${3:-.anchors/fmla}
bin="$build/cli/mlacheck"
[[ -x "$bin" ]] || { echo "device-ledger.sh: no binary at $bin (build it first, see the top of this script)" >&2; exit 2; }
export MLACHECK_DATA_DIR=${MLACHECK_DATA_DIR:-$PWD/data}
if ldd "$bin" | grep -q "not found" && [[ -d "$build/runtime-libs" ]]; then
  export LD_LIBRARY_PATH="$PWD/$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
budget=${LEDGER_BUDGET_S:-500}
out=${OUT:-device-ledger-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
summary="$out/summary.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$work/gpu.txt" "$summary"
"$bin" --version >> "$work/gpu.txt" 2>&1

# shellcheck source=scripts/device-step.sh
source scripts/device-step.sh
step_budget=$budget step_dir=$work step_summary=$summary step_tail=0

split_k='a16w16/split-k/hopper,a16w8/split-k/hopper,a16w4/split-k/hopper,a4w4/split-k/hopper,a8w8/split-k/hopper,a8w8-static/split-k/hopper,a8w8-cast/split-k/hopper'
step verify-quick 60 "$bin" verify --tier quick --strategy '*/hopper' --json "$work/verify-quick.json"
step fused-test 60 "$bin" selftest --gtest_filter='*GpuHopperFused*:*GpuClusterMerge*'
step merge-1 150 "$bin" bench --graph --reps 30 --merge rule,cluster --strategy "$split_k" --json "$work/merge-1.json"
step bar 280 env BAR_STRATEGIES='a16w16/*/hopper' BAR_PACK=1 OUT="$work/bar" scripts/bf16-bar.sh "$build" "$fi_dir" "$fmla_dir"
step persist 60 "$bin" bench --graph --reps 30 --case bs64_kv8192,bs256_kv8192 --plan-once \
  --strategy 'a8w8-static/persistent/hopper,a8w8/persistent/hopper,a16w8/persistent/hopper' --json "$work/persist.json"
step splits 60 "$bin" bench --graph --reps 30 --case bs64_kv8192 --splits 2,3,4 --merge cluster \
  --strategy 'a8w8-static/split-k/hopper,a8w8/split-k/hopper' --json "$work/splits.json"
step floor 40 "$build/probes/decode_floor"
step merge-2 150 "$bin" bench --graph --reps 30 --merge rule,cluster --strategy "$split_k" --json "$work/merge-2.json"

grep -h -E "passed|PASSED|FAILED" "$work/verify-quick.log" "$work/fused-test.log" 2> /dev/null | tail -n 6
cat "$work/bar/bar.md" 2> /dev/null
tar czf "$out/ledger.tgz" -C "$work" . && rm -rf "$work"
exit $step_status
