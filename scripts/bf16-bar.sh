#!/usr/bin/env bash
# Issue 10's bf16 bar in one device call: mlacheck's bf16 strategies, FlashInfer and FlashMLA timed
# on the same GPU in the same call (graph replay, L2 flushed), then scripts/bf16-bar.py's table.
# The rows: the 8 harness shapes, and the issue's ragged and paged rows as layout_cost's
# ragged_bs32_kv4096 and paged_p64_bs32_kv4096 (mlacheck with the plan made once, as FlashMLA's
# metadata is), FlashMLA on those cases' very lengths (their inputs files, `mlacheck gen
# --inputs-only`); FlashInfer's ragged batch is its own (other lengths: bf16-bar.py shows it, not as
# the bar).
#
# Here (the development machine), once:
#   cmake --build BUILD --target cli/mlacheck                      # -DMLACHECK_GPU=cuda
#   cp -r ../shared/tools/flashinfer-bench .anchors/fi && SKIP_PREBUILT=1 bash .anchors/fi/tools/make_bundle.sh
#   FLASHMLA_DIR=<FlashMLA checkout> bash scripts/flashmla-bench/build.sh .anchors/fmla
# On the device (carry BUILD, .anchors/fi, .anchors/fmla; about 4 minutes):
#   scripts/bf16-bar.sh BUILD [.anchors/fi] [.anchors/fmla]
# A missing FlashInfer or FlashMLA folder is skipped with a message (the table then has one other
# kernel); mlacheck's ledger runs twice, before and after the others, so that a drift of the
# machine shows as a range (bf16-bar.py judges the slower run).
# Environment: BAR_STRATEGIES (default 'a16w16/*/hopper,a16w16/*/mma'), BAR_REPS (30), FI_ARGS
# (extra arguments of FlashInfer's run.sh, e.g. '--backends fa3 --page-sizes 64'), OUT, and
# BAR_PACK=1: everything but the inputs files in $OUT/all.tgz beside bar.md (a device call hands
# back at most 8 files).
# Output in $OUT (default ./bf16-bar-out): bench-{1,2}.json (harness), layout-{1,2}.json (ragged and
# paged), inputs/, fi/, fmla/, bar.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${1:?usage: scripts/bf16-bar.sh BUILD_DIR [FLASHINFER_DIR] [FLASHMLA_DIR]}
fi_dir=${2:-.anchors/fi}
fmla_dir=${3:-.anchors/fmla}
bin="$build/cli/mlacheck"
out=${OUT:-bf16-bar-out}
strategies=${BAR_STRATEGIES:-a16w16/*/hopper,a16w16/*/mma}
reps=${BAR_REPS:-30}
export MLACHECK_DATA_DIR=${MLACHECK_DATA_DIR:-$PWD/data}
[[ -x "$bin" ]] || { echo "bf16-bar.sh: no binary at $bin (build it first, see the top of this script)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)  # absolute: the other benches run from their own folders
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/gpu.txt"

layout_cases=ragged_bs32_kv4096,paged_p64_bs32_kv4096
ledger() {  # ledger N: the harness shapes and the layout rows, every strategy of $strategies
  echo "== mlacheck ledger $1"
  "$bin" bench --graph --reps "$reps" --strategy "$strategies" --json "$out/bench-$1.json" > "$out/bench-$1.log" 2>&1
  local rc=$?
  "$bin" bench --graph --reps "$reps" --strategy "$strategies" --plan-once --case-list data/cases/layout_cost.txt \
    --case "$layout_cases" --json "$out/layout-$1.json" > "$out/layout-$1.log" 2>&1 || rc=1
  tail -n 20 "$out/bench-$1.log" "$out/layout-$1.log"
  return $rc
}

status=0
"$bin" gen --inputs-only --case-list data/cases/layout_cost.txt --cases "$layout_cases" -o "$out/inputs" \
  > "$out/inputs.log" 2>&1 || { cat "$out/inputs.log"; status=1; }
ledger 1 || status=1
others=()
if [[ -f "$fi_dir/run.sh" ]]; then
  echo "== FlashInfer ($fi_dir)"
  # shellcheck disable=SC2086  # FI_ARGS is a list of arguments
  OUT="$out/fi" bash "$fi_dir/run.sh" ${FI_ARGS:-} > "$out/fi.log" 2>&1 || status=1
  tail -n 15 "$out/fi.log"
  [[ -f "$out/fi/results.jsonl" ]] && others+=(--flashinfer "$out/fi/results.jsonl")
else
  echo "== FlashInfer: no $fi_dir/run.sh, skipped (see the top of this script to make it)"
fi
if [[ -f "$fmla_dir/libflashmla_decode.so" ]]; then
  # The library is the build's; the script is this tree's (a copy in $fmla_dir may be older).
  echo "== FlashMLA ($fmla_dir: $(cat "$fmla_dir/flashmla.commit" 2> /dev/null))"
  inputs=()
  for c in ${layout_cases//,/ }; do
    [[ -f "$out/inputs/$c.safetensors" ]] && inputs+=(--inputs "$c=$out/inputs/$c.safetensors")
  done
  python3 scripts/flashmla-bench/bench.py --lib "$fmla_dir/libflashmla_decode.so" --out "$out/fmla" "${inputs[@]}" \
    > "$out/fmla.log" 2>&1 || status=1
  tail -n 12 "$out/fmla.log"
  [[ -f "$out/fmla/fmla-results.jsonl" ]] && others+=(--flashmla "$out/fmla/fmla-results.jsonl")
else
  echo "== FlashMLA: no $fmla_dir/libflashmla_decode.so, skipped (see the top of this script to make it)"
fi
ledger 2 || status=1

runs=()
for f in "$out"/bench-{1,2}.json "$out"/layout-{1,2}.json; do [[ -s "$f" ]] && runs+=("$f"); done
if ((${#runs[@]} > 0 && ${#others[@]} > 0)); then
  python3 scripts/bf16-bar.py --mlacheck "${runs[@]}" "${others[@]}" | tee "$out/bar.md"
else
  echo "bf16-bar.sh: no table (mlacheck runs: ${#runs[@]}, other kernels' results: $((${#others[@]} / 2)))"
  status=1
fi
if [[ "${BAR_PACK:-0}" == 1 ]]; then
  rm -rf "$out/inputs"/*.safetensors
  # A name of its own (not a fixed /tmp path: two runs at once, as CI's and test.sh's tests, took each
  # other's archive), outside $out while $out is packed.
  packed=$(mktemp "${TMPDIR:-/tmp}/bf16-bar-XXXXXX.tgz")
  tar czf "$packed" -C "$out" . && mv "$packed" "$out/all.tgz"
  find "$out" -mindepth 1 ! -name all.tgz ! -name bar.md -delete
fi
exit $status
