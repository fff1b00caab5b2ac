#!/usr/bin/env python3
"""scripts/seed-bench/bench.py's loading of submissions without a GPU, torch or aiter: the
`submission N` line dropped, a whole-file diff split into its two sides, aiter's dtypes as torch's
and any other aiter function raising AiterUnavailable when called (never a silent stand-in), a
module that does not import reported, kv_data recording the formats a call read (stdlib Python).

usage: check_seed_bench.py BENCH_PY
"""
import importlib.util
import os
import sys
import tempfile
import types

failures = []


def expect(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


spec = importlib.util.spec_from_file_location("seed_bench", sys.argv[1])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
fake_torch = types.SimpleNamespace(float8_e4m3fn="e4m3fn", bfloat16="bf16", float32="f32", float16="f16",
                                   int32="i32", uint8="u8")
bench.install_stand_ins(fake_torch)

with tempfile.TemporaryDirectory() as d:
    plain = os.path.join(d, "plain.txt")
    with open(plain, "w") as f:
        f.write("submission 123\n\nfrom task import input_t, output_t\nfrom aiter import dtypes as aiter_dtypes\n"
                "from aiter.mla import mla_decode_fwd\nFP8 = aiter_dtypes.fp8\n"
                "def custom_kernel(data):\n    q, kv_data, qo, kv, config = data\n"
                "    if config['batch_size'] > 4:\n        return mla_decode_fwd(q)\n    return kv_data['fp8']\n")
    sources = bench.seed_sources(plain)
    expect(len(sources) == 1 and sources[0][0] == "" and not sources[0][1].startswith("submission"),
           "a plain submission is one source without its `submission N` line")
    module, why = bench.load_seed("plain.txt", sources[0][1])
    expect(module is not None and module.FP8 == "e4m3fn", f"it imports, aiter's fp8 dtype is torch's ({why})")
    kv_data = bench.KvRecord({"bf16": "B", "fp8": "F"})
    out = module.custom_kernel(("q", kv_data, None, None, {"batch_size": 4}))
    expect(out == "F" and kv_data.read == {"fp8"}, "kv_data records the format the call read")
    try:
        module.custom_kernel(("q", kv_data, None, None, {"batch_size": 32}))
        expect(False, "a path that needs aiter raises AiterUnavailable")
    except bench.AiterUnavailable as e:
        expect("aiter.mla.mla_decode_fwd" in str(e), "a path that needs aiter raises AiterUnavailable, naming it")

    diff = os.path.join(d, "diff.txt")
    with open(diff, "w") as f:
        f.write("submission 9\n\n  import math\n- OLD = 1\n+ NEW = 2\n  def custom_kernel(data):\n"
                "-     return OLD\n+     return NEW\n")
    sides = dict(bench.seed_sources(diff))
    expect(set(sides) == {"before", "after"}, "a whole-file diff gives its two sides")
    before, _ = bench.load_seed("diff.txt:before", sides["before"])
    after, _ = bench.load_seed("diff.txt:after", sides["after"])
    expect(before is not None and after is not None and before.custom_kernel(None) == 1
           and after.custom_kernel(None) == 2, "each side imports and is its own version")

    module, why = bench.load_seed("broken.txt", "def custom_kernel(:\n")
    expect(module is None and "not a Python module" in why, "a source that does not compile is reported")
    module, why = bench.load_seed("raises.txt", "import aiter\nX = aiter.get_mla_metadata_v1()\n")
    expect(module is None and "import failed" in why and "AiterUnavailable" in why,
           "module-level aiter use is reported as an import failure, not run")
    module, why = bench.load_seed("nokernel.txt", "X = 1\n")
    expect(module is None and why == "no custom_kernel", "a module without custom_kernel is reported")

    # Seed 001's shape: the first call warms an fp8 path that needs aiter (its own try swallows the
    # raise), every call then reads MXFP4. The row is the timed calls' format, MXFP4 alone.
    module, why = bench.load_seed("warms.txt", (
        "from aiter.mla import mla_decode_fwd\nwarmed = False\n"
        "def custom_kernel(data):\n    global warmed\n    q, kv_data, qo, kv, config = data\n"
        "    if not warmed:\n        warmed = True\n        try:\n            mla_decode_fwd(kv_data['fp8'])\n"
        "        except Exception:\n            pass\n    return kv_data['mxfp4']\n"))
    kv_data = bench.KvRecord({"fp8": "F", "mxfp4": "M"})
    out, read = bench.steady_call(module.custom_kernel, ("q", kv_data, None, None, {}), kv_data)
    expect(out == "M" and read == ["mxfp4"], f"a first call's warm-up read is not the row's format ({why}{read})")
    # A call that reads two formats every time is reported as reading both (no single format's row).
    module, why = bench.load_seed("both.txt", (
        "def custom_kernel(data):\n    q, kv_data, qo, kv, config = data\n"
        "    return (kv_data['fp8'], kv_data.get('mxfp4'))\n"))
    kv_data = bench.KvRecord({"fp8": "F", "mxfp4": "M"})
    out, read = bench.steady_call(module.custom_kernel, ("q", kv_data, None, None, {}), kv_data)
    expect(out == ("F", "M") and read == ["fp8", "mxfp4"], f"every format a steady call reads is reported ({read})")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
