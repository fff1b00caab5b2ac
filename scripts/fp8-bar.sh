#!/usr/bin/env bash
# Issue 10's fp8 bar against sglang's Triton MLA decode and the competition submissions in one device
# call: mlacheck's fp8 (and bf16) split-K strategies timed twice, around scripts/sglang-bench's sweep
# and scripts/seed-bench's run on the same GPU (graph replay, L2 flushed), then scripts/bf16-bar.py's
# tables: the fp8 recipes against sglang's fp8 rows and the submissions' fp8 calls, the MXFP4 recipes
# against the submissions' MXFP4 calls (faster on every row: margin 0), and a16w16 against sglang's
# and the submissions' bf16 (the issue's 5 %).
#
# Here (the development machine), once:
#   cmake --build BUILD --target cli/mlacheck                      # -DMLACHECK_GPU=cuda
#   bash scripts/sglang-bench/build.sh .anchors/sgl                 # PyPI needed
#   bash scripts/seed-bench/build.sh .anchors/seeds                 # ../shared/seeds
# On the device (carry BUILD, .anchors/sgl, .anchors/seeds; most of its time is Triton's compiles and
# sglang's sweep, which SGL_ARGS narrows): scripts/fp8-bar.sh BUILD [.anchors/sgl] [.anchors/seeds]
# A missing seeds folder is skipped with a message; a missing sglang folder is refused.
# Environment: FP8_BAR_STRATEGIES (default the fp8 recipes' and a16w16's hopper split-K), FP8_BAR_REPS
# (30), SGL_ARGS (extra arguments of sglang-bench's run.sh, e.g. '--shapes bs4_kv1024'), SGL_TIMEOUT_S
# (300: its sweep is stopped there, the ledgers and the tables still made), SEED_TIMEOUT_S (150), OUT, and
# BAR_PACK=1: everything in $OUT/all.tgz beside bar-fp8.md (a device call hands back at most 8 files).
# Output in $OUT (default ./fp8-bar-out): bench-{1,2}.json, sgl/, seeds/, bar-fp8.md, bar-bf16.md,
# bar-mxfp4.md (with the submissions' results).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${1:?usage: scripts/fp8-bar.sh BUILD_DIR [SGLANG_BENCH_DIR] [SEED_BENCH_DIR]}
sgl_dir=${2:-.anchors/sgl}
seed_dir=${3:-.anchors/seeds}
bin="$build/cli/mlacheck"
out=${OUT:-fp8-bar-out}
strategies=${FP8_BAR_STRATEGIES:-a8w8-cast/split-k/hopper,a8w8/split-k/hopper,a8w8-static/split-k/hopper,a16w8/split-k/hopper,a16w16/split-k/hopper,a16w4/split-k/hopper,a4w4/split-k/hopper}
fp8_recipes=a8w8-cast,a8w8,a8w8-static,a16w8
mxfp4_recipes=a16w4,a4w4
reps=${FP8_BAR_REPS:-30}
export MLACHECK_DATA_DIR=${MLACHECK_DATA_DIR:-$PWD/data}
[[ -x "$bin" ]] || { echo "fp8-bar.sh: no binary at $bin (build it first, see the top of this script)" >&2; exit 2; }
[[ -f "$sgl_dir/run.sh" ]] || { echo "fp8-bar.sh: no $sgl_dir/run.sh (make it: see the top of this script)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)  # absolute: sglang's bench runs from its own folder
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/gpu.txt"

ledger() {  # ledger N: the harness shapes, every strategy of $strategies
  echo "== mlacheck ledger $1"
  "$bin" bench --graph --reps "$reps" --strategy "$strategies" --json "$out/bench-$1.json" > "$out/bench-$1.log" 2>&1
  local rc=$?
  tail -n 45 "$out/bench-$1.log"
  return $rc
}

status=0
ledger 1 || status=1
echo "== sglang ($sgl_dir: $(cat "$sgl_dir/sglang.version" 2> /dev/null))"
# shellcheck disable=SC2086  # SGL_ARGS is a list of arguments
OUT="$out/sgl" timeout "${SGL_TIMEOUT_S:-300}" bash "$sgl_dir/run.sh" ${SGL_ARGS:-} > "$out/sgl.log" 2>&1 || status=1
tail -n 25 "$out/sgl.log"
if [[ -f "$seed_dir/run.sh" ]]; then
  echo "== the competition submissions ($seed_dir)"
  OUT="$out/seeds" timeout "${SEED_TIMEOUT_S:-150}" bash "$seed_dir/run.sh" > "$out/seeds.log" 2>&1 || status=1
  tail -n 40 "$out/seeds.log"
else
  echo "== the competition submissions: no $seed_dir/run.sh, skipped (see the top of this script to make it)"
fi
ledger 2 || status=1

runs=()
for f in "$out"/bench-{1,2}.json; do [[ -s "$f" ]] && runs+=("$f"); done
if ((${#runs[@]} > 0)) && [[ -s "$out/sgl/sgl-results.jsonl" ]]; then
  seeds_fp8=() seeds_bf16=()
  if [[ -s "$out/seeds/seed-results.jsonl" ]]; then
    seeds_fp8=(--seeds "$out/seeds/seed-results.jsonl" --seeds-format fp8)
    seeds_bf16=(--seeds "$out/seeds/seed-results.jsonl" --seeds-format bf16)
  fi
  python3 scripts/bf16-bar.py --mlacheck "${runs[@]}" --sglang "$out/sgl/sgl-results.jsonl" --sglang-format fp8 \
    "${seeds_fp8[@]}" --recipes "$fp8_recipes" --margin 0 | tee "$out/bar-fp8.md" || status=1
  python3 scripts/bf16-bar.py --mlacheck "${runs[@]}" --sglang "$out/sgl/sgl-results.jsonl" --sglang-format bf16 \
    "${seeds_bf16[@]}" > "$out/bar-bf16.md" 2>&1 || status=1
  cat "$out/bar-bf16.md"
  if [[ -s "$out/seeds/seed-results.jsonl" ]]; then  # MXFP4: the submissions are the only other kernels
    python3 scripts/bf16-bar.py --mlacheck "${runs[@]}" --seeds "$out/seeds/seed-results.jsonl" --seeds-format mxfp4 \
      --recipes "$mxfp4_recipes" --margin 0 > "$out/bar-mxfp4.md" 2>&1 || status=1
    cat "$out/bar-mxfp4.md"
  fi
else
  echo "fp8-bar.sh: no table (mlacheck runs: ${#runs[@]}, sglang results: $([[ -s $out/sgl/sgl-results.jsonl ]] && echo yes || echo none))"
  status=1
fi
if [[ "${BAR_PACK:-0}" == 1 ]]; then
  # A name of its own (not a fixed /tmp path: two runs at once, as CI's and test.sh's tests, took each
  # other's archive), outside $out while $out is packed.
  packed=$(mktemp "${TMPDIR:-/tmp}/fp8-bar-XXXXXX.tgz")
  tar czf "$packed" -C "$out" . && mv "$packed" "$out/all.tgz"
  find "$out" -mindepth 1 ! -name all.tgz ! -name bar-fp8.md -delete
fi
exit $status
