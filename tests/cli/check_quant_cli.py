#!/usr/bin/env python3
"""End-to-end check of `mlacheck quant`, the way an outside user reaches the codecs.

Runs the binary on the oracle inputs (data/oracles, outputs of the original PyTorch / aiter code)
and reads its output files with pip-installed `safetensors` + NumPy, so it checks at once that the
codes are bit-exact and that the files load in Python with the right dtype and shape. Then feeds it
bad inputs and expects exit code 2 with a message naming the file.

Usage: check_quant_cli.py MLACHECK_BINARY ORACLE_FILE WORK_DIR
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def raw(path, name):
    """(dtype string, shape, raw bytes) of one tensor, read by safetensors' own parser."""
    with safe_open(str(path), framework="numpy") as f:
        sl = f.get_slice(name)
        dtype, shape = sl.get_dtype(), sl.get_shape()
    # NumPy has no fp8 dtypes: take the bytes from the file at the offsets safetensors accepted.
    data = Path(path).read_bytes()
    n = int.from_bytes(data[:8], "little")
    import json
    info = json.loads(data[8:8 + n])[name]
    b, e = info["data_offsets"]
    return dtype, shape, data[8 + n + b:8 + n + e]


def run(binary, *args):
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True)


def main():
    binary, oracle_path, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    with safe_open(str(oracle_path), framework="numpy") as f:
        names = set(f.keys())
    oracle = {n: raw(oracle_path, n) for n in names}

    def u8(name):
        return np.frombuffer(oracle[name][2], dtype=np.uint8)

    def u16(name):
        return np.frombuffer(oracle[name][2], dtype=np.uint16)

    def quant(fmt, tensor, *extra):
        out = work / f"{fmt}_{tensor}_{'_'.join(extra)}.safetensors".replace("--", "")
        r = run(binary, "quant", "--format", fmt, "--tensor", tensor, *extra, oracle_path, out)
        check(r.returncode == 0, f"quant --format {fmt} --tensor {tensor} {' '.join(extra)} exits 0 "
                                 f"(stderr: {r.stderr.strip()[:200]})")
        return out

    # Elementwise casts of the 1 216 hand-picked float32 values.
    out = quant("e4m3fn", "tricky__x")
    dt, shape, y = raw(out, "y")
    check(dt == "F8_E4M3" and shape == [1216], f"e4m3fn: y is F8_E4M3 [1216] (got {dt} {shape})")
    check(y == oracle["tricky__e4m3fn"][2], "e4m3fn: codes equal torch's tricky__e4m3fn bit for bit")

    out = quant("e4m3fnuz", "tricky__x")
    dt, shape, y = raw(out, "y")
    check(dt == "U8" and shape == [1216], f"e4m3fnuz: y is U8 [1216] (got {dt} {shape})")
    check(y == oracle["tricky__e4m3fnuz"][2], "e4m3fnuz: codes equal torch's tricky__e4m3fnuz")

    out = quant("e8m0", "tricky__x")
    dt, shape, y = raw(out, "y")
    check(dt == "F8_E8M0" and shape == [1216], f"e8m0: y is F8_E8M0 [1216] (got {dt} {shape})")
    check(y == oracle["tricky__e8m0_torch"][2], "e8m0: codes equal torch's tricky__e8m0_torch")

    out = quant("bf16", "tricky__x")
    dt, shape, yb = raw(out, "y")
    got, want = np.frombuffer(yb, np.uint16), u16("tricky__bf16_cpu")
    x = np.frombuffer(oracle["tricky__x"][2], np.float32)
    finite = ~np.isnan(x)
    check(dt == "BF16" and shape == [1216], f"bf16: y is BF16 [1216] (got {dt} {shape})")
    check(np.array_equal(got[finite], want[finite]), "bf16: non-NaN codes equal torch's")
    check(bool(np.all(got[~finite] == 0x7FC0)), "bf16: NaN gives 0x7FC0 (NUMERICS Decisions table)")

    # The harness's per-tensor FP8 on whole tensors.
    for case in ["randn_1", "zeros", "amax_448", "with_nan", "randn_2^-130"]:
        for v in ["e4m3fn", "e4m3fnuz"]:
            out = quant(f"fp8-harness-{v}", f"fp8__{case}__x")
            dt, shape, y = raw(out, "y")
            sdt, sshape, s = raw(out, "scale")
            want_dt = "F8_E4M3" if v == "e4m3fn" else "U8"
            check(dt == want_dt and shape == list(oracle[f"fp8__{case}__x"][1]),
                  f"fp8-harness-{v} {case}: y dtype/shape {dt} {shape}")
            check(sdt == "F32" and sshape == [1], f"fp8-harness-{v} {case}: scale is F32 [1]")
            check(y == oracle[f"fp8__{case}__{v}__q"][2], f"fp8-harness-{v} {case}: codes bit-exact")
            want_s = oracle[f"fp8__{case}__{v}__scale"][2]
            if np.isnan(np.frombuffer(want_s, np.float32)[0]):
                # The oracle's NaN is CUDA's bf16 0x7FFF widened; mlacheck's bf16 NaN is 0x7FC0
                # (NUMERICS Decisions table), so only NaN-ness is compared.
                check(bool(np.isnan(np.frombuffer(s, np.float32)[0])), f"fp8-harness-{v} {case}: scale is NaN")
            else:
                check(s == want_s, f"fp8-harness-{v} {case}: scale bit-exact")

    # MXFP4: competition-like rows through both aiter kernels (AMD semantics).
    for rounding, ver in [("rne", "aiter20260317"), ("ties-away", "aiter20251028")]:
        out = quant("mxfp4", "mxfp4_comp__x", "--mxfp4-rounding", rounding)
        dt, shape, y = raw(out, "y")
        sdt, sshape, s = raw(out, "scale")
        check(dt == "U8" and shape == [8, 288], f"mxfp4 {rounding}: y is U8 [8, 288] (got {dt} {shape})")
        check(sdt == "F8_E8M0" and sshape == [8, 18], f"mxfp4 {rounding}: scale F8_E8M0 [8, 18]")
        check(y == oracle[f"mxfp4_comp__{ver}_amd__fp4"][2], f"mxfp4 {rounding}: packed codes bit-exact")
        check(s == oracle[f"mxfp4_comp__{ver}_amd__scale"][2], f"mxfp4 {rounding}: scales bit-exact")
        # Special rows: every block the oracle does not flag as NVIDIA-specific.
        out = quant("mxfp4", "mxfp4_special__x", "--mxfp4-rounding", rounding)
        _, _, y = raw(out, "y")
        _, _, s = raw(out, "scale")
        flags = u8("mxfp4_special__platform_flags").reshape(24, 18)
        keep = (flags & 1) == 0
        got_s = np.frombuffer(s, np.uint8).reshape(24, 18)
        want_s = u8(f"mxfp4_special__{ver}_amd__scale").reshape(24, 18)
        got_y = np.frombuffer(y, np.uint8).reshape(24, 18, 16)
        want_y = u8(f"mxfp4_special__{ver}_amd__fp4").reshape(24, 18, 16)
        check(np.array_equal(got_s[keep], want_s[keep]), f"mxfp4 {rounding} special rows: scales of "
              f"{int(keep.sum())} portable blocks bit-exact")
        check(np.array_equal(got_y[keep], want_y[keep]), f"mxfp4 {rounding} special rows: codes of "
              "portable blocks bit-exact")

    # --raw-u8 writes plain bytes for readers without fp8 dtypes; same bytes.
    out = quant("e4m3fn", "tricky__x", "--raw-u8")
    dt, _, y = raw(out, "y")
    check(dt == "U8" and y == oracle["tricky__e4m3fn"][2], "--raw-u8: U8 with the same codes")

    # Bad inputs: exit code 2 and a message that names the file (and tensor where there is one).
    save_file({"x": np.zeros((3, 31), np.float32)}, str(work / "odd.safetensors"))
    save_file({"x": np.zeros((3, 32), np.int32)}, str(work / "int.safetensors"))
    good = (work / "int.safetensors").read_bytes()
    (work / "truncated.safetensors").write_bytes(good[:-5])
    bad_cases = [
        (["--format", "mxfp4", work / "odd.safetensors", work / "o.safetensors"], "odd.safetensors"),
        (["--format", "e4m3fn", work / "int.safetensors", work / "o.safetensors"], "int.safetensors"),
        (["--format", "e4m3fn", work / "truncated.safetensors", work / "o.safetensors"], "truncated.safetensors"),
        (["--format", "e4m3fn", work / "missing.safetensors", work / "o.safetensors"], "missing.safetensors"),
        (["--format", "e4m3fn", "--tensor", "nope", oracle_path, work / "o.safetensors"], "nope"),
        (["--format", "e5m2", oracle_path, work / "o.safetensors"], "e5m2"),
        (["--format", "mxfp4", "--mxfp4-rounding", "up", oracle_path, work / "o.safetensors"], "up"),
        (["--format", "mxfp4", "--fp8-overflow", "saturate", oracle_path, work / "o.safetensors"], "fp8-overflow"),
    ]
    for args, needle in bad_cases:
        r = run(binary, "quant", *args)
        check(r.returncode == 2 and needle in r.stderr,
              f"bad input {' '.join(map(str, args))}: exit 2 naming '{needle}' (got {r.returncode}: "
              f"{r.stderr.strip()[:160]})")
    check(not (work / "o.safetensors").exists(), "no output file is left behind by a failed run")

    print(f"{len(failures)} failed" if failures else "all quant CLI checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
