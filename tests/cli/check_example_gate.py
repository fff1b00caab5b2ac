#!/usr/bin/env python3
"""The worked example of examples/ (issue 9), as CI runs it: an independent NumPy decode kernel
(its own schedule: 4 splits, 64-key tiles, base-2 exp, bf16 P) and a copy with one planted bug (the
merge weights every split equally), judged by the binary:

- compare accepts the kernel with no schedule declared (schedule-free bound) and with its schedule
  declared (tight bound), and rejects it under a schedule it did not run;
- identify names its recipe and split count;
- drift finds every stage within its bound;
- the buggy copy is rejected by compare, and drift puts the first stage out of its bound at the merge;
- a kernel that leaves rows with no key undefined (NaN) fails by default and passes with
  --empty-rows any, which counts the rows;
- reading a golden file from NumPy needs `import ml_dtypes` first (the README says so);
- a kernel that pre-scales q in bf16 (--q-prescaled) passes under q=bf16-scaled, its LSE too
  (identify names that recipe), and
  on peaked data its LSE fails under plain bf16 Q (the field is what tells them apart).

usage: check_example_gate.py MLACHECK WORKDIR
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


def kernel(script, golden, out, *extra):
    r = run(sys.executable, ROOT / "examples" / script, golden, out, *extra)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit("the example kernel failed")


def drift_stages_both_ways(binary, work, golden):
    """drift's split partials on 32 splits of 64 keys: faults of the size the old allowance hid are
    localized, correct kernels (l from unrounded or rounded P) pass, and an LSE fault is the LSEs'."""
    def first_failure(out, tag, schedule="splits=32,tile=32"):
        r = run(binary, "drift", golden, out, "--recipe", "a16w16:base=2", "--schedule", schedule,
                "--json", work / f"drift_{tag}.json")
        d = json.loads((work / f"drift_{tag}.json").read_text()) if r.returncode in (0, 1) else {}
        return r.returncode, d.get("first_failure")

    for tag, extra in (("s32", []), ("s32_rounded_l", ["--l-rounded"])):
        out = work / f"{tag}.safetensors"
        kernel("numpy_decode.py", golden, out, "--splits", "32", "--tile", "32", *extra)
        rc, first = first_failure(out, tag)
        check(rc == 0 and first is None,
              "32 splits %s: drift finds every stage within its bound (exit %d, first failure %s)" % (tag, rc, first))
    # Skipped rope dims (scores over dims 0..511): on this harness data its LSEs stay within the
    # rounded-P allowance (check/lse.h) and, before the partials were judged as their share
    # o e^lse with their measured P code flips, its partials too (0.68x): drift put it at 'output'.
    skip = work / "skip_rope.safetensors"
    r = run(sys.executable, "-c", f"""
import sys
sys.path.insert(0, {str(ROOT / "examples")!r})
import numpy_decode as nd
plain = nd.split_partials
def skip_rope(q, k, v, n_req, n_visible):
    q = q.copy(); q[:, 512:] = 0
    return plain(q, k, v, n_req, n_visible)
nd.split_partials = skip_rope
nd.main([sys.argv[1], sys.argv[2], "--splits", "32", "--tile", "32"])
""", golden, skip)
    check(r.returncode == 0, "the skip-rope kernel runs (exit %d: %s)" % (r.returncode, r.stderr[-300:]))
    rc, first = first_failure(skip, "skip_rope")
    check(rc == 1 and first == "split partials",
          "skipped rope dims on 32 splits: drift localizes them at the split partials (exit %d, first failure %s)"
          % (rc, first))
    # Every split LSE off by 0.05 (beyond its allowance), partials and merge untouched: the LSEs'
    # fault, the partials judged on their own.
    shifted = work / "split_lse_shifted.safetensors"
    r = run(sys.executable, "-c", f"""
import sys, ml_dtypes, numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
with safe_open(sys.argv[1], "np") as f:
    t = {{k: f.get_tensor(k) for k in f.keys()}}
t["partial_lse"] = (t["partial_lse"] + np.float32(0.05)).astype(np.float32)
save_file(t, sys.argv[2])
""", work / "s32.safetensors", shifted)
    check(r.returncode == 0, "write the shifted split LSEs (exit %d: %s)" % (r.returncode, r.stderr[-300:]))
    rc, first = first_failure(shifted, "split_lse_shifted")
    check(rc == 1 and first == "split LSEs",
          "split LSEs off by 0.05: drift localizes them at the split LSEs (exit %d, first failure %s)" % (rc, first))


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    golden = ROOT / "data" / "golden" / "small_ragged_paged.safetensors"
    good, bad = work / "good.safetensors", work / "bad.safetensors"
    kernel("numpy_decode.py", golden, good)
    kernel("numpy_decode_buggy.py", golden, bad)

    r = run(binary, "compare", golden, good, "--recipe", "a16w16")
    check(r.returncode == 0 and "kernel (schedule-free) bound" in r.stdout,
          "compare, no schedule declared: the example passes under the schedule-free bound (exit %d)" % r.returncode)
    r = run(binary, "compare", golden, good, "--recipe", "a16w16:base=2", "--schedule", "splits=4,tile=64")
    check(r.returncode == 0, "compare, its schedule declared: passes the tight bound (exit %d)" % r.returncode)
    # The LSE as FlashMLA shapes it for s_q = 1, [T, 16, 1], is read as [T, 16]; a wrong LSE fails.
    code = f"""
import sys, ml_dtypes, numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
with safe_open({str(good)!r}, "np") as f:
    t = {{"out": f.get_tensor("out"), "lse": f.get_tensor("lse")[..., None]}}
save_file(t, sys.argv[1])
t["lse"] = t["lse"] + np.float32(float(sys.argv[3]))
save_file(t, sys.argv[2])
"""
    # With bf16 P the LSE check admits a kernel that sums l from the rounded P (check/lse.h): on
    # these short rows that is ~2e-3, so an LSE off by 1e-2 must fail, and one off by 1e-3 must
    # still fail for f32 P, where the term is 0.
    lse3, lse_bad = work / "lse3.safetensors", work / "lse_bad.safetensors"
    r = run(sys.executable, "-c", code, lse3, lse_bad, "1e-2")
    r = run(binary, "compare", golden, lse3, "--recipe", "a16w16")
    check(r.returncode == 0 and "lse (lse): PASS" in r.stdout, "an LSE of shape [T, 16, 1] is read and passes (exit %d)" % r.returncode)
    r = run(binary, "compare", golden, lse_bad, "--recipe", "a16w16")
    check(r.returncode == 1 and "lse (lse): FAIL" in r.stdout and "q=bf16-scaled" not in r.stdout,
          "an LSE off by 1e-2 fails, with no pre-scaled-q hint (exit %d)" % r.returncode)
    f32_out = work / "f32_p.safetensors"
    kernel("numpy_decode.py", golden, f32_out, "--p", "f32")
    code_f32 = code.replace(repr(str(good)), repr(str(f32_out)))
    lse3_f32, lse_bad_f32 = work / "lse3_f32.safetensors", work / "lse_bad_f32.safetensors"
    r = run(sys.executable, "-c", code_f32, lse3_f32, lse_bad_f32, "1e-3")
    r = run(binary, "compare", golden, lse3_f32, "--recipe", "a16w16:p=f32")
    check(r.returncode == 0, "f32 P: the kernel and its LSE pass (exit %d)" % r.returncode)
    r = run(binary, "compare", golden, lse_bad_f32, "--recipe", "a16w16:p=f32")
    check(r.returncode == 1 and "lse (lse): FAIL" in r.stdout,
          "f32 P: an LSE off by 1e-3 fails (no row-sum rounding term) (exit %d)" % r.returncode)
    # A kernel that sums the row sum from the rounded P (the P that multiplies V): correct, and
    # accepted by compare with and without its schedule and by drift at every stage (its LSEs and
    # split partials move by up to ~u(P) relative; measured: rejected before this term).
    rounded_l = work / "rounded_l.safetensors"
    kernel("numpy_decode.py", golden, rounded_l, "--l-rounded")
    r = run(binary, "compare", golden, rounded_l, "--recipe", "a16w16")
    check(r.returncode == 0 and "lse (lse): PASS" in r.stdout,
          "l summed from the rounded P, no schedule declared: passes, LSE too (exit %d)" % r.returncode)
    r = run(binary, "compare", golden, rounded_l, "--recipe", "a16w16:base=2", "--schedule", "splits=4,tile=64")
    check(r.returncode == 0, "l summed from the rounded P, its schedule declared: passes (exit %d)" % r.returncode)
    # The tight bound's power needs rows long enough that another cut re-rounds many weights: a
    # harness-shaped golden of 4 x 2048 keys.
    long_golden, long_out = work / "bs4_kv2048.safetensors", work / "long.safetensors"
    r = run(binary, "gen", "--batch", "4", "--kv-len", "2048", "--seed", "4217", "-o", long_golden)
    check(r.returncode == 0, "gen a 4 x 2048 golden (exit %d)" % r.returncode)
    kernel("numpy_decode.py", long_golden, long_out)
    r = run(binary, "compare", long_golden, long_out, "--recipe", "a16w16")
    check(r.returncode == 0, "4 x 2048, no schedule declared: passes (exit %d)" % r.returncode)
    r = run(binary, "compare", long_golden, long_out, "--recipe", "a16w16:base=2", "--schedule", "splits=4,tile=64")
    check(r.returncode == 0, "4 x 2048, its schedule declared: passes (exit %d)" % r.returncode)
    long_rounded = work / "long_rounded_l.safetensors"
    kernel("numpy_decode.py", long_golden, long_rounded, "--l-rounded")
    r = run(binary, "drift", long_golden, long_rounded, "--recipe", "a16w16:base=2", "--schedule", "splits=4,tile=64",
            "--json", work / "drift_rounded_l.json")
    d = json.loads((work / "drift_rounded_l.json").read_text()) if r.returncode in (0, 1) else {}
    check(r.returncode == 0 and d.get("first_failure") is None,
          "4 x 2048, l summed from the rounded P: drift finds every stage within its bound (exit %d, first failure %s)"
          % (r.returncode, d.get("first_failure")))
    drift_stages_both_ways(binary, work, long_golden)
    for wrong in ("splits=3,tile=64", "splits=4"):
        r = run(binary, "compare", long_golden, long_out, "--recipe", "a16w16:base=2", "--schedule", wrong)
        check(r.returncode == 1 and "repro: mlacheck compare" in r.stdout,
              "4 x 2048, a schedule it did not run (%s) declared: rejected, with a repro line (exit %d)"
              % (wrong, r.returncode))

    r = run(binary, "identify", golden, good, "--json", work / "identify.json")
    best = json.loads((work / "identify.json").read_text())["ranked"][0] if r.returncode == 0 else {}
    check(r.returncode == 0 and best.get("recipe", "").startswith("a16w16")
          and "p=" not in best.get("recipe", "") and best.get("schedule", "").startswith("splits=4"),
          "identify: best candidate is a16w16 (bf16 P) with 4 splits (got %s %s)"
          % (best.get("recipe"), best.get("schedule")))

    r = run(binary, "drift", golden, good, "--recipe", "a16w16:base=2", "--schedule", "splits=4,tile=64",
            "--json", work / "drift_good.json", "--maps", work / "maps")
    d = json.loads((work / "drift_good.json").read_text()) if r.returncode in (0, 1) else {}
    check(r.returncode == 0 and d.get("first_failure") is None
          and all(s["pass"] for s in d["stages"] if s["present"])
          and {s["stage"] for s in d["stages"] if s["present"]} >= {"split partials", "split LSEs", "merge", "output", "lse"},
          "drift: every stage of the example within its bound (exit %d)" % r.returncode)
    check((work / "maps" / "output_token_head.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n",
          "drift --maps writes PNG heatmaps")
    shares = {s["stage"]: s["share"] for s in d.get("waterfall", {}).get("stages", [])}
    check(set(shares) == {"P rounding", "output rounding"} and shares["output rounding"] > shares["P rounding"] > 0,
          "drift: the a16w16 waterfall has P and output rounding, the output's the larger share (%s)" % shares)

    r = run(binary, "compare", golden, bad, "--recipe", "a16w16")
    check(r.returncode == 1, "compare rejects the buggy copy (exit %d)" % r.returncode)
    r = run(binary, "drift", golden, bad, "--recipe", "a16w16:base=2", "--schedule", "splits=4,tile=64",
            "--json", work / "drift_bad.json")
    d = json.loads((work / "drift_bad.json").read_text()) if r.returncode in (0, 1) else {}
    check(r.returncode == 1 and d.get("first_failure") == "merge",
          "drift localizes the planted bug at the merge (exit %d, first failure %s)" % (r.returncode, d.get("first_failure")))

    # Q codes: a8w8's output with the kernel's own fp8 Q (the harness quantizer, through `mlacheck
    # quant`) saved beside it: drift checks them bit for bit; one code off is the first failure.
    qfile = work / "q_fp8.safetensors"
    r = run(binary, "quant", "--format", "fp8-harness-e4m3fn", "--raw-u8", "--tensor", "q", long_golden, qfile)
    check(r.returncode == 0, "quant the golden's q with the harness fp8 (exit %d)" % r.returncode)
    code = f"""
import sys, ml_dtypes, numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
with safe_open({str(long_golden)!r}, "np") as f:
    out = f.get_tensor("out_a8w8"); lse = f.get_tensor("lse_a8w8")
with safe_open({str(qfile)!r}, "np") as f:
    y = f.get_tensor("y"); scale = f.get_tensor("scale")
codes = y.view(np.uint8).copy()
t = {{"out": out, "lse": lse, "q_fp8": codes, "q_scale": scale}}
save_file(t, sys.argv[1])
codes[0, 3, 100] ^= 1
t["q_fp8"] = codes
save_file(t, sys.argv[2])
"""
    q_ok, q_bad = work / "a8w8_q_ok.safetensors", work / "a8w8_q_bad.safetensors"
    r = run(sys.executable, "-c", code, q_ok, q_bad)
    check(r.returncode == 0, "write a8w8 outputs with their Q codes (%s)" % r.stderr.strip()[-200:])
    r = run(binary, "drift", long_golden, q_ok, "--recipe", "a8w8", "--schedule", "splits=32",
            "--json", work / "drift_q_ok.json")
    d = json.loads((work / "drift_q_ok.json").read_text()) if r.returncode in (0, 1) else {}
    q_stage = next((s for s in d.get("stages", []) if s["stage"] == "Q codes"), {})
    check(r.returncode == 0 and q_stage.get("present") and q_stage.get("pass"),
          "drift: the harness-quantized Q codes match a8w8's bit for bit (exit %d)" % r.returncode)
    r = run(binary, "drift", long_golden, q_bad, "--recipe", "a8w8", "--schedule", "splits=32",
            "--json", work / "drift_q_bad.json")
    d = json.loads((work / "drift_q_bad.json").read_text()) if r.returncode in (0, 1) else {}
    check(r.returncode == 1 and d.get("first_failure") == "Q codes",
          "drift: one Q code off is the first failure (exit %d, %s)" % (r.returncode, d.get("first_failure")))

    # Rows with no key: a golden with empty requests, a kernel that writes NaN there.
    empty_golden = work / "ragged_empty.safetensors"
    r = run(binary, "gen", "--batch", "8", "--kv-len", "40", "--seed", "3", "--layout", "ragged", "-o", empty_golden)
    check(r.returncode == 0, "gen a ragged golden with empty requests (exit %d)" % r.returncode)
    nan_out = work / "nan_rows.safetensors"
    kernel("numpy_decode.py", empty_golden, nan_out)
    code = f"""
import ml_dtypes, numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
with safe_open({str(nan_out)!r}, "np") as f:
    t = {{k: f.get_tensor(k) for k in f.keys()}}
with safe_open({str(empty_golden)!r}, "np") as f:
    kvp = f.get_tensor("kv_indptr")
rows = [b for b in range(len(kvp) - 1) if kvp[b + 1] == kvp[b]]
assert rows, "no empty request"
out = t["out"].astype(np.float32)
out[rows] = np.nan
t["out"] = out.astype(ml_dtypes.bfloat16)
t["lse"][rows] = np.nan
save_file(t, {str(nan_out)!r})
print(len(rows))
"""
    r = run(sys.executable, "-c", code)
    empty = int(r.stdout.strip()) if r.returncode == 0 else 0
    r = run(binary, "compare", empty_golden, nan_out, "--recipe", "a16w16")
    check(r.returncode == 1 and "NaN/Inf" in r.stdout and "hint:" in r.stdout and "--empty-rows any" in r.stdout,
          "NaN in rows with no key fails by default, with a hint naming --empty-rows any (exit %d)" % r.returncode)
    nan_elsewhere = work / "nan_elsewhere.safetensors"
    code_elsewhere = f"""
import ml_dtypes, numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
with safe_open({str(nan_out)!r}, "np") as f:
    t = {{k: f.get_tensor(k) for k in f.keys()}}
with safe_open({str(empty_golden)!r}, "np") as f:
    kvp = f.get_tensor("kv_indptr")
full = [b for b in range(len(kvp) - 1) if kvp[b + 1] > kvp[b]][0]
out = t["out"].astype(np.float32)
out[full, 3, 7] = np.nan
t["out"] = out.astype(ml_dtypes.bfloat16)
save_file(t, {str(nan_elsewhere)!r})
"""
    r = run(sys.executable, "-c", code_elsewhere)
    r = run(binary, "compare", empty_golden, nan_elsewhere, "--recipe", "a16w16")
    check(r.returncode == 1 and "hint:" not in r.stdout,
          "no such hint when a row with keys holds a NaN too (exit %d)" % r.returncode)
    r = run(binary, "identify", empty_golden, nan_out)
    check(r.returncode == 0 and "verdict under it (every request, tight bound): FAIL" in r.stdout and "hint:" in r.stdout,
          "identify on it: the verdict fails by default, with the hint (exit %d)" % r.returncode)
    r = run(binary, "identify", empty_golden, nan_out, "--empty-rows", "any")
    check(r.returncode == 0 and "verdict under it (every request, tight bound): PASS" in r.stdout
          and "--empty-rows any" in r.stdout.split("check it:")[-1],
          "identify --empty-rows any: the verdict passes, and its compare command carries the option (exit %d)" % r.returncode)
    r = run(binary, "compare", empty_golden, nan_out, "--recipe", "a16w16", "--empty-rows", "any")
    check(r.returncode == 0 and ("rows with no key: %d (token, head) rows not judged" % (16 * empty)) in r.stdout,
          "--empty-rows any passes it and counts the %d rows (exit %d)" % (16 * empty, r.returncode))

    # NumPy reads bf16 tensors only with ml_dtypes imported first.
    probe = f"""
from safetensors import safe_open
try:
    with safe_open({str(golden)!r}, "np") as f:
        f.get_tensor("q")
    print("read")
except TypeError as e:
    print("TypeError", e)
"""
    r = run(sys.executable, "-c", probe)
    check("TypeError" in r.stdout and "bfloat16" in r.stdout,
          "without ml_dtypes, NumPy cannot read the bf16 q (%s)" % r.stdout.strip()[:80])
    r = run(sys.executable, "-c", "import ml_dtypes\n" + probe)
    check(r.stdout.strip() == "read", "with `import ml_dtypes` first it can (%s)" % r.stdout.strip()[:80])

    # Q pre-scaled in bf16: the scores move by about 2^-9 of each term, which the output's bounds
    # absorb but the LSE (float32 tight) does not on the peaked golden's large scores.
    peaked = ROOT / "data" / "golden" / "small_peaked_q4.safetensors"
    prescaled = work / "prescaled.safetensors"
    kernel("numpy_decode.py", peaked, prescaled, "--q-prescaled")
    for extra in ([], ["--schedule", "splits=4,tile=64"]):
        r = run(binary, "compare", peaked, prescaled, "--recipe", "a16w16:q=bf16-scaled,base=2", *extra)
        check(r.returncode == 0 and "lse (lse): PASS" in r.stdout,
              "q pre-scaled in bf16 passes under q=bf16-scaled, LSE included %s(exit %d)" % (extra, r.returncode))
    r = run(binary, "compare", peaked, prescaled, "--recipe", "a16w16:base=2")
    check(r.returncode == 1 and "lse (lse): FAIL" in r.stdout and "kernel error (output vs emulated a16w16:base=2): PASS" in r.stdout,
          "under plain bf16 Q its output passes and its LSE fails (exit %d)" % r.returncode)
    check("judge it with --recipe a16w16:q=bf16-scaled,base=2" in r.stdout,
          "and compare names the field that explains it")
    # identify searches pre-scaled Q too, and both bases in its coarse grid (on this one-hot data
    # the split count is not pinned down: 50 keys a request; the recipe is).
    r = run(binary, "identify", peaked, prescaled, "--json", work / "identify_prescaled.json")
    best = json.loads((work / "identify_prescaled.json").read_text())["ranked"][0] if r.returncode == 0 else {}
    check(best.get("recipe") == "a16w16:q=bf16-scaled,base=2",
          "identify names the pre-scaled Q, bf16 P and base 2 (got %s %s)" % (best.get("recipe"), best.get("schedule")))

    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
