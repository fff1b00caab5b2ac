#!/usr/bin/env bash
# What compare says of a8w8 kernels whose fp8 products accumulate as examples/fp8_tensorcore.py
# models sm_90's tensor core (examples/numpy_decode_fp8_tc.py), over accumulation widths, promotion
# intervals and data profiles, judged as a8w8, a8w8:fp8-acc=tc64 and a8w8:fp8-acc=tc: the table of
# docs/PERF.md "fp8 tensor-core accumulation through the gate". CPU only, about 10 minutes on 2
# cores (9 min 16 s measured).
#   scripts/fp8-tensorcore-sweep.sh MLACHECK WORKDIR        (PY: Python with numpy, ml_dtypes, safetensors)
# One line per golden x variant x recipe (fp8 sums in float32, or the model's: fp8-acc=tc64, tc) x bound
# (schedule declared or not): verdict, worst kernel-bound ratio (error / tolerance of the
# worst element), elements within, the LSE's worst / allowed and, with no schedule, the envelope's
# distance / allowed.
set -euo pipefail
bin=$(realpath "$1")
work=$2
py=${PY:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"

gen() {  # name, gen arguments
  [[ -f "$work/$1.safetensors" ]] || "$bin" gen --recipes a8w8 -o "$work/$1.safetensors" "${@:2}" >/dev/null
}
for g in small_harness small_peaked_q4 small_ragged_paged small_boundary; do
  ln -sf "$root/data/golden/$g.safetensors" "$work/$g.safetensors"
done
gen harness_4x1024 --batch 4 --kv-len 1024 --seed 4217
gen harness_4x8192 --batch 4 --kv-len 8192 --seed 4220
gen peaked_8x1024 --batch 8 --kv-len 1024 --seed 31 --profile peaked
gen peaked_4x2048 --batch 4 --kv-len 2048 --seed 51 --profile peaked
gen outliers_8x1024 --batch 8 --kv-len 1024 --seed 32 --profile outliers
gen outliers_q2 --batch 8 --kv-len 700 --seed 36 --profile outliers --q-len 2

variants=(
  "float32|--float32"
  "run64_b13_fp22|--bits 13 --final-bits 13"
  "run64_b13_fp22_own|--bits 13 --final-bits 13 --own-exponents"
  "run64_b14_f32|--bits 14 --final-bits 23"
  "run64_b13_fp22_c-after|--bits 13 --final-bits 13 --no-align-c"
  "run64_b12_fp22_floor|--bits 12 --final-bits 13 --toward floor"
  "run32_b13_fp22|--run 32 --bits 13 --final-bits 13"
  "run0_b13_fp22|--run 0 --bits 13 --final-bits 13"
  "run0_b13_f32|--run 0 --bits 13 --final-bits 23"
  "run0_b14_f32|--run 0 --bits 14 --final-bits 23"
  "run0_b16_f32|--run 0 --bits 16 --final-bits 23"
  "run64_b10_fp22|--bits 10 --final-bits 13"
  "run64_b8_fp22|--bits 8 --final-bits 13"
  "run64_b6_fp22|--bits 6 --final-bits 13"
)
summary='
import json, sys
r = json.load(open(sys.argv[1]))
k = r["gate"]["kernel"]["metrics"]
w = k["worst"][0] if k["worst"] else {"abs_error": 0.0, "tolerance": 1.0}
lse = r.get("lse") or {}
e = r["gate"].get("schedule_free_envelope")
print("%-5s kernel %7.3f (%d/%d)  lse %7.3f%s" % (r["verdict"], w["abs_error"] / w["tolerance"],
      k["elements_within"], k["elements"],
      lse.get("worst_units", 0.0) / max(lse.get("allowed_units", 1.0), 1e-30),
      "  envelope %.2f" % (e["output_distance"] / e["allowed"]) if e else ""))
'
for g in small_harness small_peaked_q4 small_ragged_paged small_boundary harness_4x1024 \
         harness_4x8192 peaked_8x1024 peaked_4x2048 outliers_8x1024 outliers_q2; do
  for v in "${variants[@]}"; do
    tag=${v%%|*}
    out="$work/$g.$tag.safetensors"
    # shellcheck disable=SC2086  # the variant's options are words
    [[ -f "$out" ]] || "$py" "$root/examples/numpy_decode_fp8_tc.py" "$work/$g.safetensors" "$out" ${v#*|}
    for recipe in a8w8 a8w8:fp8-acc=tc64 a8w8:fp8-acc=tc; do
      for how in declared free; do
        sched=(); [[ $how == declared ]] && sched=(--schedule splits=4,tile=64)
        rm -f "$work/report.json"
        rc=0
        "$bin" compare "$work/$g.safetensors" "$out" --recipe "$recipe" "${sched[@]}" \
          --json "$work/report.json" >"$work/compare.log" 2>&1 || rc=$?
        if (( rc > 1 )) || [[ ! -f "$work/report.json" ]]; then  # not a verdict: say so, never a stale line
          line="error: compare exit $rc: $(tail -1 "$work/compare.log")"
        else
          line=$("$py" -c "$summary" "$work/report.json")
        fi
        printf '%-18s %-24s %-18s %-8s %s\n' "$g" "$tag" "$recipe" "$how" "$line"
      done
    done
  done
done
