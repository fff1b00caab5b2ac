#!/usr/bin/env python3
"""scripts/flashmla-bench/bench.py's reader of mlacheck inputs files (the lengths FlashMLA is timed on
beside mlacheck's ragged and paged cases), on files `mlacheck gen --inputs-only` writes: the lengths
are the safetensors package's kv_indptr differences; a q_len 2 batch, a truncated file and a file
without kv_indptr are refused with the file's name. (The reader is the standard library's, not the
safetensors package's, because the GPU machine's Python may lack the package.)

usage: check_flashmla_lengths.py MLACHECK BENCH_DIR WORK_DIR
"""
import os
import shutil
import subprocess
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

mlacheck, bench_dir, work = sys.argv[1:4]
sys.dont_write_bytecode = True  # nothing written into scripts/
sys.path.insert(0, bench_dir)
import bench  # noqa: E402  (scripts/flashmla-bench/bench.py; torch is imported only by its main)

failures = []


def expect(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def refused(path):
    try:
        bench.mlacheck_lengths(path)
    except SystemExit as e:
        return str(e)
    return None


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
cases = os.path.join(work, "cases.txt")
with open(cases, "w") as f:
    f.write("name=ragged batch=37 kv_len=700 layout=ragged page_size=64 seed=11\n"
            "name=paged batch=5 kv_len=300 page_size=64 shuffle_pages=1 poison_unused=1 seed=12\n"
            "name=q2 batch=3 kv_len=40 q_len=2 seed=13\n")
subprocess.run([mlacheck, "gen", "--inputs-only", "--case-list", cases, "-o", work], check=True,
               stdout=subprocess.DEVNULL)

for name in ("ragged", "paged"):
    path = os.path.join(work, f"{name}.safetensors")
    with safe_open(path, framework="numpy") as f:  # kv_indptr alone (numpy has no bfloat16 for q, kv)
        want = np.diff(f.get_tensor("kv_indptr").astype(np.int64)).tolist()
    got = bench.mlacheck_lengths(path)
    expect(got == want, f"{name}: the lengths are kv_indptr's differences ({len(got)} requests, {sum(got)} keys)")
ragged = bench.mlacheck_lengths(os.path.join(work, "ragged.safetensors"))
expect(0 in ragged and len(set(ragged)) > 5, "the ragged case has an empty request and many lengths (a real test)")

why = refused(os.path.join(work, "q2.safetensors"))
expect(why is not None and "one query a request" in why, "a q_len 2 batch is refused")

whole = open(os.path.join(work, "ragged.safetensors"), "rb").read()
truncated = os.path.join(work, "truncated.safetensors")
with open(truncated, "wb") as f:
    f.write(whole[:200])
why = refused(truncated)
expect(why is not None and "truncated.safetensors" in why, "a truncated file is refused with its name")

no_kv = os.path.join(work, "no_kv.safetensors")
save_file({"qo_indptr": np.arange(4, dtype=np.int32)}, no_kv)
why = refused(no_kv)
expect(why is not None and "kv_indptr" in why, "a file without kv_indptr is refused, naming it")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
