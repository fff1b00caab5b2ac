#!/usr/bin/env python3
"""scripts/sglang-bench/bench.py's loader without a GPU, torch or sglang: stand-in kernel files that
import what sglang's do (sglang.srt.utils, sglang.srt.environ, the score_mod sibling) load under
their own names, the utils stand-in answers for NVIDIA, a read of envs raises instead of answering a
default, a missing file and an AMD torch are refused with a message (stdlib Python only).

usage: check_sglang_bench.py BENCH_PY
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


spec = importlib.util.spec_from_file_location("sglang_bench", sys.argv[1])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

fake_torch = types.SimpleNamespace(
    version=types.SimpleNamespace(hip=None),
    cuda=types.SimpleNamespace(get_device_properties=lambda i: types.SimpleNamespace(multi_processor_count=132)))

with tempfile.TemporaryDirectory() as src:
    with open(os.path.join(src, "score_mod.py"), "w") as f:
        f.write("def unpack_aux_tensors(score_mod, aux):\n    return None, 0, 0, 0\n")
    with open(os.path.join(src, "decode_attention.py"), "w") as f:
        f.write("from sglang.kernels.ops.attention.score_mod import unpack_aux_tensors\n"
                "from sglang.srt.environ import envs\n"
                "from sglang.srt.utils import get_device_core_count, is_gfx95_supported, is_gfx1250_supported, is_hip\n"
                "_is_hip = is_hip()\n"
                "def cores():\n    return get_device_core_count(0)\n"
                "def tune():\n    return envs.SGLANG_MLA_DECODE_TUNE.get()\n")
    da = bench.load_sglang(src, fake_torch)
    expect(da.__name__ == "sglang.kernels.ops.attention.decode_attention", "the kernel file loads under its own name")
    expect(da._is_hip is False and da.is_gfx95_supported() is False and da.is_gfx1250_supported() is False,
           "the utils stand-in answers False to the AMD probes")
    expect(da.cores() == 132, "the core count is the device's")
    expect(da.unpack_aux_tensors(None, None) == (None, 0, 0, 0), "score_mod is the file beside it, not a stand-in")
    try:
        da.tune()
        expect(False, "a read of envs raises")
    except RuntimeError as e:
        expect("SGLANG_MLA_DECODE_TUNE" in str(e), "a read of envs raises, naming the variable")
    os.remove(os.path.join(src, "score_mod.py"))
    try:
        bench.load_sglang(src, fake_torch)
        expect(False, "a missing kernel file is refused")
    except SystemExit as e:
        expect("score_mod.py missing" in str(e), "a missing kernel file is refused, named")
    try:
        bench.load_sglang(src, types.SimpleNamespace(version=types.SimpleNamespace(hip="6.2")))
        expect(False, "an AMD torch is refused")
    except SystemExit as e:
        expect("AMD" in str(e), "an AMD torch is refused (the stand-ins answer for NVIDIA)")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
