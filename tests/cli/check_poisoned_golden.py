#!/usr/bin/env python3
"""Golden files are never silently wrong (issue 11, item 1):

- a case whose unused cache rows hold NaN (poison_unused=1: the tail of partly used pages) gets a
  finite FP8 scale, taken over the rows the batch reads, and finite fp8 references (before: the
  whole-tensor scale was NaN and every fp8 recipe's out_* was 0, with exit 0);
- an input whose own fp8 cache holds the NaN code in a row that is read is refused by `ref` with
  exit 2 naming the reference that would not be finite, and nothing is written.

usage: check_poisoned_golden.py MLACHECK WORKDIR   (Python with safetensors, numpy, ml_dtypes)
"""
import json
import struct
import subprocess
import sys
from pathlib import Path

import ml_dtypes  # noqa: F401  (before any bf16 tensor is read)
import numpy as np
from safetensors import safe_open

failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += 0 if cond else 1


def write_raw(path, tensors, metadata):
    """A safetensors file from raw bytes (numpy has no F8 dtype to hand to safetensors)."""
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    cases = work / "poisoned.txt"
    cases.write_text("name=poisoned batch=3 kv_len=70 seed=5 layout=ragged page_size=16 poison_unused=1\n")
    r = subprocess.run([binary, "gen", "--case-list", cases, "-o", work], capture_output=True, text=True)
    check(r.returncode == 0, "gen a paged case with NaN in its unused rows (exit %d)" % r.returncode)
    golden = work / "poisoned.safetensors"
    with safe_open(str(golden), "np") as f:
        kv = f.get_tensor("kv").astype(np.float32)
        scale = f.get_tensor("kv_fp8_scale")
        outs = {n: f.get_tensor(n).astype(np.float32) for n in f.keys() if n.startswith("out_")}
        t = {n: f.get_tensor(n) for n in ("q", "kv", "qo_indptr", "kv_indptr", "kv_indices")}
        meta = f.metadata()
    check(bool(np.isnan(kv).any()), "the unused rows do hold NaN")
    check(bool(np.isfinite(scale).all()) and scale[0] > 0, "the fp8 scale is finite (%s)" % scale)
    for name in ("out_a16w8", "out_a8w8", "out_a16w4"):
        o = outs[name]
        check(bool(np.isfinite(o).all()) and float(np.abs(o).max()) > 0,
              "%s is finite and not all zero" % name)

    # An input with the fp8 NaN code in a row that request 0 reads: refused, nothing written.
    with safe_open(str(golden), "np") as f:
        row = int(t["kv_indices"][0]) * int(meta["page_size"])  # key 0 of request 0
    n = kv.shape[0]
    codes = np.full((n, 1, 576), 0x38, dtype=np.uint8)
    codes[row, 0, 7] = 0x7F
    raw = lambda a: np.ascontiguousarray(a).tobytes()
    bad = work / "bad_fp8_input.safetensors"
    write_raw(bad, {
        "q": ("BF16", list(t["q"].shape), raw(t["q"])),
        "kv": ("BF16", list(t["kv"].shape), raw(t["kv"])),
        "qo_indptr": ("I32", list(t["qo_indptr"].shape), raw(t["qo_indptr"])),
        "kv_indptr": ("I32", list(t["kv_indptr"].shape), raw(t["kv_indptr"])),
        "kv_indices": ("I32", list(t["kv_indices"].shape), raw(t["kv_indices"])),
        "kv_fp8": ("F8_E4M3", [n, 1, 576], codes.tobytes()),
        "kv_fp8_scale": ("F32", [1], struct.pack("<f", 0.001)),
    }, {"page_size": meta["page_size"]})
    out = work / "bad_fp8_golden.safetensors"
    r = subprocess.run([binary, "ref", bad, out], capture_output=True, text=True)
    check(r.returncode == 2 and "out_a16w8" in r.stderr and "not finite" in r.stderr and not out.exists(),
          "ref refuses an fp8 NaN code in a row that is read, naming the reference (exit %d: %s)"
          % (r.returncode, r.stderr.strip()[-160:]))
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
