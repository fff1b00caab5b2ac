#!/usr/bin/env python3
"""End-to-end check of `mlacheck gen`, `ref`, `compare` and the manifest, through the binary.

Golden files are read with pip-installed `safetensors` + NumPy only (what a kernel engineer's
PyTorch/NumPy code sees), and the exact output is recomputed here independently in float64 NumPy.

Usage: check_golden_cli.py MLACHECK_BINARY WORK_DIR
"""
import json
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


def run(binary, *args):
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True)


def bf16_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


def tensors(path):
    """name -> (dtype, shape, raw bytes), read at the offsets safetensors' own parser accepted."""
    out = {}
    with safe_open(str(path), framework="numpy") as f:
        meta = f.metadata()
        for k in f.keys():
            sl = f.get_slice(k)
            out[k] = [sl.get_dtype(), sl.get_shape()]
    data = Path(path).read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    for k in out:
        b, e = header[k]["data_offsets"]
        out[k].append(data[8 + n + b:8 + n + e])
    return meta, out


def naive_exact(q, kv, qo, kvp, q_len):
    """float64 MLA decode over the bf16 values, causal for q_len > 1."""
    out = np.zeros((q.shape[0], 16, 512))
    lse = np.full((q.shape[0], 16), -np.inf)
    for b in range(len(kvp) - 1):
        keys = kv[kvp[b]:kvp[b + 1], 0, :].astype(np.float64)
        L = keys.shape[0]
        for i, row in enumerate(range(qo[b], qo[b + 1])):
            n = L - q_len + i + 1
            if n <= 0:
                continue
            s = q[row].astype(np.float64) @ keys[:n].T / 24.0
            m = s.max(axis=1, keepdims=True)
            p = np.exp(s - m)
            l = p.sum(axis=1, keepdims=True)
            out[row] = p @ keys[:n, :512] / l
            lse[row] = (m + np.log(l))[:, 0]
    return out, lse


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)

    # gen: one small causal case; the exact output against NumPy float64.
    golden = work / "small.safetensors"
    r = run(binary, "gen", "--batch", 3, "--kv-len", 37, "--seed", 11, "--q-len", 2, "--profile", "peaked", "-o", golden)
    check(r.returncode == 0, f"gen exits 0 ({r.stderr.strip()[:200]})")
    meta, t = tensors(golden)
    check(meta.get("schema") == "mlacheck-golden/1", f"schema in __metadata__ ({meta.get('schema')})")
    check(meta.get("seed") == "11" and meta.get("profile") == "peaked", "seed and profile in __metadata__")
    expect = {"q": ("BF16", [6, 16, 576]), "kv": ("BF16", [111, 1, 576]), "qo_indptr": ("I32", [4]),
              "kv_indptr": ("I32", [4]), "kv_fp8": ("F8_E4M3", [111, 1, 576]), "kv_fp8_scale": ("F32", [1]),
              "kv_mxfp4": ("U8", [111, 1, 288]), "kv_mxfp4_scale": ("F8_E8M0", [111, 1, 18]),
              "out_exact": ("F32", [6, 16, 512]), "lse_exact": ("F32", [6, 16])}
    for rec in ["a16w16", "a16w8", "a8w8", "a8w8-static", "a8w8-cast", "a16w4", "a4w4"]:
        expect[f"out_{rec}"] = ("BF16", [6, 16, 512])
        expect[f"lse_{rec}"] = ("F32", [6, 16])
    for name, (dt, shape) in expect.items():
        check(name in t and t[name][0] == dt and t[name][1] == shape,
              f"{name} is {dt} {shape} (got {t.get(name, ['-', '-'])[:2]})")
    q = bf16_to_f32(np.frombuffer(t["q"][2], np.uint16)).reshape(6, 16, 576)
    kv = bf16_to_f32(np.frombuffer(t["kv"][2], np.uint16)).reshape(111, 1, 576)
    qo = np.frombuffer(t["qo_indptr"][2], np.int32)
    kvp = np.frombuffer(t["kv_indptr"][2], np.int32)
    out, lse = naive_exact(q, kv, qo, kvp, 2)
    got = np.frombuffer(t["out_exact"][2], np.float32).reshape(6, 16, 512)
    got_lse = np.frombuffer(t["lse_exact"][2], np.float32).reshape(6, 16)
    rel = np.abs(got - out).max() / np.abs(out).max()
    check(rel < 1e-6, f"out_exact equals NumPy float64 attention (max rel diff {rel:.2e})")
    check(np.allclose(got_lse, lse, rtol=1e-6, atol=1e-6), "lse_exact equals NumPy's log-sum-exp")

    # gen is deterministic: a second run writes the same bytes.
    again = work / "again.safetensors"
    run(binary, "gen", "--batch", 3, "--kv-len", 37, "--seed", 11, "--q-len", 2, "--profile", "peaked", "-o", again)
    check(again.read_bytes() == golden.read_bytes(), "gen twice gives the same file, byte for byte")

    # gen --inputs-only, then ref: the same golden tensors as gen in one step.
    inputs = work / "inputs.safetensors"
    r1 = run(binary, "gen", "--batch", 3, "--kv-len", 37, "--seed", 11, "--q-len", 2, "--profile", "peaked",
             "--inputs-only", "-o", inputs)
    _, ti = tensors(inputs)
    check(r1.returncode == 0 and set(ti) == {"q", "kv", "qo_indptr", "kv_indptr"},
          f"--inputs-only writes only the inputs ({sorted(ti)})")
    completed = work / "completed.safetensors"
    r2 = run(binary, "ref", inputs, completed)
    check(r2.returncode == 0, f"ref exits 0 ({r2.stderr.strip()[:200]})")
    _, tc = tensors(completed)
    check(all(tc[k][2] == t[k][2] for k in t), "ref completes the inputs to the same bytes as gen")

    # ref on a file written by NumPy, with a subset of recipes.
    with safe_open(str(golden), framework="numpy") as f:
        base = {k: f.get_tensor(k) for k in ["qo_indptr", "kv_indptr"]}
    q_u16 = np.frombuffer(t["q"][2], np.uint16).reshape(6, 16, 576)
    kv_u16 = np.frombuffer(t["kv"][2], np.uint16).reshape(111, 1, 576)

    def write_bf16_input(path, q_bits, kv_bits, qo_ip, kv_ip, extra=None):
        # safetensors.numpy has no bf16: write the file by hand (the format is simple).
        items = [("q", "BF16", q_bits), ("kv", "BF16", kv_bits), ("qo_indptr", "I32", qo_ip),
                 ("kv_indptr", "I32", kv_ip)] + (extra or [])
        header, blobs, off = {}, [], 0
        for name, dt, arr in items:
            b = np.ascontiguousarray(arr).tobytes()
            header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
            blobs.append(b)
            off += len(b)
        h = json.dumps(header).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        Path(path).write_bytes(len(h).to_bytes(8, "little") + h + b"".join(blobs))

    numpy_in = work / "numpy_in.safetensors"
    write_bf16_input(numpy_in, q_u16, kv_u16, base["qo_indptr"], base["kv_indptr"])
    r = run(binary, "ref", numpy_in, work / "numpy_golden.safetensors", "--recipes", "a8w8,a16w4")
    _, tn = tensors(work / "numpy_golden.safetensors")
    check(r.returncode == 0 and "out_a8w8" in tn and "out_a16w8" not in tn and tn["out_a8w8"][2] == t["out_a8w8"][2],
          "ref --recipes a8w8,a16w4 on a NumPy-written file: only those recipes, same bytes")

    # ref refuses bad inputs with exit 2 and a message naming the file and the problem.
    bad_q = q_u16.copy()
    bad_q[1, 2, 3] = 0x7FC0
    bad_kvp = base["kv_indptr"].copy()
    bad_kvp[2] = bad_kvp[1] - 1
    bad_cases = {
        "nan_q": (dict(q_bits=bad_q), "NaN"),
        "non_monotonic": (dict(kv_ip=bad_kvp), "not monotonic"),
        "batch_mismatch": (dict(qo_ip=base["qo_indptr"][:-1]), "batch sizes differ"),
        "past_cache": (dict(kv_ip=base["kv_indptr"] * 2), "cache"),
        "paged_past_cache": (dict(extra=[("kv_indices", "I32", np.array([0, 1, 200] + list(range(3, 111)), np.int32))]),
                             "kv_indices[2] = 200"),
    }
    for name, (kw, needle) in bad_cases.items():
        args = dict(q_bits=q_u16, kv_bits=kv_u16, qo_ip=base["qo_indptr"], kv_ip=base["kv_indptr"])
        args.update(kw)
        path = work / f"bad_{name}.safetensors"
        write_bf16_input(path, args["q_bits"], args["kv_bits"], args["qo_ip"], args["kv_ip"], args.get("extra"))
        r = run(binary, "ref", path, work / "never.safetensors")
        check(r.returncode == 2 and needle in r.stderr and path.name in r.stderr,
              f"ref refuses {name}: exit 2 naming the file and '{needle}' (got {r.returncode}: {r.stderr.strip()[:160]})")
    save_file({"q": np.zeros((6, 16, 576), np.float32)}, str(work / "bad_dtype.safetensors"))
    r = run(binary, "ref", work / "bad_dtype.safetensors", work / "never.safetensors")
    check(r.returncode == 2 and "qo_indptr" in r.stderr, f"ref refuses a file without indptr ({r.stderr.strip()[:120]})")
    check(not (work / "never.safetensors").exists(), "no output is left behind by a refused input")

    # compare: the emulated output itself passes; all zeros fails the gate.
    out_bits = np.frombuffer(t["out_a8w8"][2], np.uint16).reshape(6, 16, 512)
    def write_out(path, bits):
        b = bits.tobytes()
        h = json.dumps({"out": {"dtype": "BF16", "shape": list(bits.shape), "data_offsets": [0, len(b)]}}).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        Path(path).write_bytes(len(h).to_bytes(8, "little") + h + b)
    write_out(work / "good_out.safetensors", out_bits)
    write_out(work / "zero_out.safetensors", np.zeros_like(out_bits))
    r = run(binary, "compare", golden, work / "good_out.safetensors", "--recipe", "a8w8")
    check(r.returncode == 0, f"compare: the emulated a8w8 output passes (exit {r.returncode})")
    r = run(binary, "compare", golden, work / "zero_out.safetensors", "--recipe", "a8w8")
    check(r.returncode == 1, f"compare: an all-zero output fails (exit {r.returncode})")

    # Manifest: write, check, and a tampered hash is caught.
    cases = work / "cases.txt"
    cases.write_text("name=tiny_a batch=2 kv_len=40 seed=5\nname=tiny_b batch=1 kv_len=17 seed=6 profile=outliers page_size=4 shuffle_pages=1\n")
    manifest = work / "manifest.json"
    r = run(binary, "gen", "--case-list", cases, "--write-manifest", manifest, "--recipes", "a16w16")
    check(r.returncode == 0 and manifest.exists(), f"gen --write-manifest ({r.stderr.strip()[:160]})")
    r = run(binary, "gen", "--check-manifest", manifest)
    check(r.returncode == 0 and "2 checked, 0 failed" in r.stdout, f"--check-manifest passes ({r.stdout.strip()[-80:]})")
    m = json.loads(manifest.read_text())
    m["cases"][1]["tensors"]["kv_mxfp4"] = "0" * 16
    manifest.write_text(json.dumps(m))
    r = run(binary, "gen", "--check-manifest", manifest)
    check(r.returncode == 1 and "MISMATCH" in r.stdout and "kv_mxfp4" in r.stdout,
          f"--check-manifest catches a changed hash (exit {r.returncode})")

    print(f"{len(failures)} failed" if failures else "all golden CLI checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
