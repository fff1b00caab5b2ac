#!/usr/bin/env python3
"""End-to-end check of `mlacheck compare`, the way a kernel engineer uses it.

Writes a small golden file and kernel outputs with the Python standard library only (safetensors
is 8 bytes of header length, a JSON header and raw little-endian data), runs the binary on them and
checks exit codes (0 pass, 1 fail, 2 usage or input error), the report and the --json file.
The golden's out_exact is a plain fp64 softmax attention of its q and kv, written here.

Usage: check_compare_cli.py MLACHECK_BINARY WORK_DIR
"""
import json
import math
import random
import struct
import subprocess
import sys
from pathlib import Path

H, D, DV = 16, 576, 512
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def bf16_bits(x):
    """float -> bf16 bits, round to nearest even (NUMERICS §2.1); no NaN here."""
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def pack(dtype, values):
    fmt = {"BF16": "H", "F16": "e", "F32": "f", "I32": "i"}[dtype]
    return struct.pack("<%d%s" % (len(values), fmt), *values)


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> (dtype, shape, bytes)."""
    header, offset, blobs = {}, 0, []
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def make_golden(path, batch=2, kv_len=64, seed=7, nan_exact_at=None, fp8_nan_at=None):
    rng = random.Random(seed)
    randn = lambda n: [bf16_bits(bf16_value(bf16_bits(rng.gauss(0, 1))) * 0.02) for _ in range(n)]
    q = randn(batch * H * D)
    kv = randn(batch * kv_len * D)
    qf = [bf16_value(b) for b in q]
    kvf = [bf16_value(b) for b in kv]
    exact = []
    for b in range(batch):
        rows = [kvf[(b * kv_len + t) * D:(b * kv_len + t + 1) * D] for t in range(kv_len)]
        for h in range(H):
            qh = qf[(b * H + h) * D:(b * H + h + 1) * D]
            s = [sum(x * y for x, y in zip(qh, r)) / 24.0 for r in rows]
            m = max(s)
            w = [math.exp(x - m) for x in s]
            l = sum(w)
            exact += [sum(w[t] * rows[t][d] for t in range(kv_len)) / l for d in range(DV)]
    exact = [struct.unpack("<f", struct.pack("<f", x))[0] for x in exact]
    emulated = [bf16_bits(x) for x in exact]  # a16w16's emulation is this close on such data
    stored_exact = list(exact)
    if nan_exact_at is not None:
        stored_exact[nan_exact_at] = float("nan")
    extra = {}
    if fp8_nan_at is not None:  # an fp8 cache of codes 0x38 (1.0) with one NaN code (0x7F)
        codes = [0x38] * (batch * kv_len * D)
        codes[fp8_nan_at] = 0x7F
        extra = {"kv_fp8": ("F8_E4M3", [batch * kv_len, 1, D], bytes(codes)),
                 "kv_fp8_scale": ("F32", [1], pack("F32", [0.001]))}
    write_safetensors(path, {**extra,
        "q": ("BF16", [batch, H, D], pack("BF16", q)),
        "kv": ("BF16", [batch * kv_len, 1, D], pack("BF16", kv)),
        "qo_indptr": ("I32", [batch + 1], pack("I32", list(range(batch + 1)))),
        "kv_indptr": ("I32", [batch + 1], pack("I32", [b * kv_len for b in range(batch + 1)])),
        "out_exact": ("F32", [batch, H, DV], pack("F32", stored_exact)),
        "out_a16w16": ("BF16", [batch, H, DV], pack("BF16", emulated)),
    }, {"schema": "mlacheck-golden/1", "seed": str(seed), "profile": "harness",
        "shape": "batch=%d kv_len=%d" % (batch, kv_len)})
    return batch, exact, emulated


def run(binary, *args):
    return subprocess.run([binary, "compare", *map(str, args)], capture_output=True, text=True)


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    golden = work / "golden.safetensors"
    batch, exact, emulated = make_golden(golden)
    shape = [batch, H, DV]

    def output(name, tensors):
        path = work / name
        write_safetensors(path, tensors)
        return path

    good = output("good.safetensors", {"out": ("BF16", shape, pack("BF16", emulated))})
    r = run(binary, golden, good, "--recipe", "a16w16", "--json", work / "good.json")
    check(r.returncode == 0, "bf16 output equal to the emulation passes (exit %d)" % r.returncode)
    check("VERDICT: PASS" in r.stdout and "harness check" in r.stdout, "report has verdict and harness check")
    report = json.loads((work / "good.json").read_text())
    check(report["verdict"] == "pass" and report["schedule"] == "undeclared"
          and report["gate"]["kernel"]["bound"]["name"] == "kernel (schedule-free)",
          "--json: verdict, and the schedule-free kernel bound judged it")
    check(report["power"]["rows"][1]["name"] == "zeros" and report["power"]["rows"][1]["gate_rejects"],
          "--json: the power report scores all zeros")

    zeros = output("zeros.safetensors", {"out": ("BF16", shape, pack("BF16", [0] * len(emulated)))})
    r = run(binary, golden, zeros, "--recipe", "a16w16")
    check(r.returncode == 1, "all-zero output fails (exit %d)" % r.returncode)
    check(any("harness check (rtol=atol=1e-2)" in line and "accepts" in line for line in r.stdout.splitlines()),
          "... while the harness's check accepts it")

    f32 = output("f32.safetensors", {"result": ("F32", [batch, 1, H, DV], pack("F32", exact))})
    r = run(binary, golden, f32, "--recipe", "a16w16")
    check(r.returncode == 0, "F32 [B, 1, 16, 512] output, single tensor of another name, passes (exit %d)" % r.returncode)
    check("using its only tensor 'result'" in r.stderr, "... with a note naming the tensor used")

    f16 = output("f16.safetensors", {"out": ("F16", shape, pack("F16", exact))})
    r = run(binary, golden, f16, "--recipe", "a16w16")
    check(r.returncode == 0, "F16 output passes (exit %d)" % r.returncode)

    i = next(k for k, x in enumerate(exact) if 3e-4 < x < 4.5e-4)
    nudged = list(emulated)
    nudged[i] += 16  # at kv_len 64 one flipped bf16 P may move an element a few ulps; 16 is a bug
    off = output("off16.safetensors", {"out": ("BF16", shape, pack("BF16", nudged))})
    # Declared: the tight bound of an emulation that replays the kernel's numerics and schedule. The
    # "kernel" here is the exact output rounded to bf16, i.e. unrounded P in a single pass.
    r = run(binary, golden, off, "--recipe", "a16w16:p=f32", "--schedule", "single")
    token, rest = divmod(i, H * DV)
    head, dim = divmod(rest, DV)
    check(r.returncode == 1 and "kernel error: 1 of" in r.stdout,
          "one element 16 bf16 ulps off fails the declared-schedule kernel bound (exit %d)" % r.returncode)
    check("token %d (request %d) head %d dim %d" % (token, token, head, dim) in r.stdout,
          "... and the report names its position")
    check("repro: mlacheck compare" in r.stdout and "--schedule single" in r.stdout,
          "... and prints the repro line")
    r = run(binary, golden, good, "--recipe", "a16w16:p=f32", "--schedule", "single")
    check(r.returncode == 0, "... while the un-nudged output passes that bound (exit %d)" % r.returncode)
    # No schedule declared: the bound allows any schedule's P rounding, not a tenth of the output.
    far = list(emulated)
    far[i] = bf16_bits(bf16_value(emulated[i]) + 0.1 * max(abs(x) for x in exact))
    far_path = output("far.safetensors", {"out": ("BF16", shape, pack("BF16", far))})
    r = run(binary, golden, far_path, "--recipe", "a16w16")
    check(r.returncode == 1 and "kernel error: 1 of" in r.stdout,
          "one element off by a tenth of the largest output fails the schedule-free bound (exit %d)"
          % r.returncode)

    def usage_error(what, args, must_mention):
        r = run(binary, *args)
        check(r.returncode == 2 and all(m in r.stderr for m in must_mention),
              "%s: exit 2 naming %s (exit %d: %s)" % (what, must_mention, r.returncode, r.stderr.strip()))

    bad_shape = output("shape.safetensors", {"out": ("BF16", [batch, H, 256], pack("BF16", emulated[:batch * H * 256]))})
    usage_error("wrong shape", (golden, bad_shape, "--recipe", "a16w16"), [str(bad_shape), "'out'", "[2, 16, 256]"])
    bad_dtype = output("dtype.safetensors", {"out": ("I32", shape, pack("I32", [0] * len(emulated)))})
    usage_error("wrong dtype", (golden, bad_dtype, "--recipe", "a16w16"), [str(bad_dtype), "I32"])
    usage_error("missing --tensor", (golden, good, "--recipe", "a16w16", "--tensor", "o"), [str(good), "'o'"])
    usage_error("unknown recipe", (golden, good, "--recipe", "a9w9"), ["a9w9", "a16w16"])
    usage_error("golden without the recipe's cache", (golden, good, "--recipe", "a8w8"), [str(golden), "kv_fp8"])
    usage_error("bad recipe field", (golden, good, "--recipe", "a16w16:p=fp9"), ["fp9", "f32|bf16|f16|fp8"])
    usage_error("bad schedule", (golden, good, "--recipe", "a16w16", "--schedule", "splits=0"), ["splits=0"])
    usage_error("missing golden", (work / "nope.safetensors", good, "--recipe", "a16w16"), ["nope.safetensors"])
    # A golden whose references or read caches are not finite judges nothing (NaN matches NaN).
    nan_golden = work / "nan_exact.safetensors"
    make_golden(nan_golden, nan_exact_at=DV * 3 + 5)
    usage_error("golden with NaN in out_exact", (nan_golden, good, "--recipe", "a16w16"),
                [str(nan_golden), "out_exact", "[0, 3, 5]"])
    fp8_golden = work / "nan_fp8.safetensors"
    make_golden(fp8_golden, fp8_nan_at=(64 + 2) * D + 7)
    usage_error("golden with an fp8 NaN code in a row read", (fp8_golden, good, "--recipe", "a16w8"),
                [str(fp8_golden), "kv_fp8", "[66, 0, 7]", "key 2 of request 1"])
    r = run(binary, golden)
    check(r.returncode == 2, "missing arguments: exit 2 (exit %d)" % r.returncode)

    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("all compare CLI checks passed")


if __name__ == "__main__":
    main()
