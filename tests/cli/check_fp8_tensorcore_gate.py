#!/usr/bin/env python3
"""The gate and kernels whose fp8 x fp8 products accumulate as an sm_90 tensor core's may.

examples/fp8_tensorcore.py models that accumulation as docs/probes/fp8_accumulation.cu measured it
(NVIDIA does not document it); examples/numpy_decode_fp8_tc.py is an a8w8 kernel running both products through
the model. Checked here:
- the model does what its text says, on sums whose exact values are known (the cases of
  GpuWgmma.E4m3AccumulationKeepsTheModelsBits, which runs them on the hardware);
- no false alarm: the kernel with a fresh accumulator every 64 products (the a8w8 hopper kernels'
  design) at 13 bits with an FP22 accumulator (ref/fp8_mma.h's kSm90Fp8Mma) passes compare as
  a8w8:fp8-acc=tc64 (whose emulation sums as that model does) on every committed golden, with its
  schedule declared or not, and the kernel that never promotes (Triton's default on sm_90) passes
  as a8w8:fp8-acc=tc; as plain a8w8 (float32 sums) the promoted one passes with no schedule
  everywhere and with its schedule declared except on small_peaked_q4; the float32 control passes
  as a8w8;
- power: on small_peaked_q4 the float32 control fails as tc64 and as tc (its scores are not the
  model's), the never-promoted kernel as a8w8 (its scores are not float32); keeping 6 bits fails
  every way on the three other goldens, keeping 8 with the schedule declared.

usage: check_fp8_tensorcore_gate.py MLACHECK WORKDIR
"""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import fp8_tensorcore as tc  # noqa: E402
from cli_checks import Checks, run  # noqa: E402  (next to this file)

SCHEDULE = ["--schedule", "splits=4,tile=64"]  # numpy_decode_fp8_tc.py's defaults
check = Checks()


def model_cases():
    """One K step of 32 with C loaded: which small addends survive each model."""
    def step(c, products, model):  # each product as itself times 1
        p = np.zeros((len(c), tc.K_STEP))
        for i, terms in enumerate(products):
            p[i, :len(terms)] = terms
        return tc.accumulate(np.asarray(c, np.float32), p, np.ones_like(p), model).astype(np.float64)

    # C = 2^r plus the product 1: kept while r <= bits (1 is then a multiple of 2^(r - bits)).
    r = np.arange(0, 24)
    c = 2.0 ** r
    for bits in (13, 14):
        got = step(c, [[1.0]] * len(r), tc.Accumulation(bits=bits, final_bits=23))
        first_lost = int(r[np.argmax(got != c + 1)])
        check(first_lost == bits + 1, f"C = 2^r plus 1 at {bits} bits: first lost at r = {first_lost}")
    # Two products 2^16 and 2^(16 - g) in one step, C = 0: the smaller kept while g <= bits.
    g = np.arange(0, 18)
    got = step(np.zeros(len(g)), [[2.0 ** 16, 2.0 ** (16 - x)] for x in g], tc.Accumulation(bits=13, final_bits=23))
    check(int(g[np.argmax(got != 2.0 ** 16 + 2.0 ** (16 - g))]) == 14,
          "2^16 + 2^(16 - g) at 13 bits: first lost at g = 14")
    # C = -2^r plus 1: toward zero keeps 1 - 2^r exact while r <= bits; floor cuts the negative C
    # alike but a two's-complement cut of 1 - 2^r never gains magnitude.
    c = -(2.0 ** r)
    zero = step(c, [[1.0]] * len(r), tc.Accumulation(bits=13, final_bits=23, toward="zero"))
    check(int(r[np.argmax(zero != c + 1)]) == 14, "-2^r plus 1 toward zero at 13 bits: first lost at r = 14")
    floor = step([-1.0 - 2.0 ** -20], [[1.0]], tc.Accumulation(bits=13, final_bits=23, toward="floor"))
    check(floor[0] == -2.0 ** -13, f"floor cuts C = -1 - 2^-20 to -1 - 2^-13 (plus 1: {floor[0]})")
    # The accumulator's own width, with an alignment wide enough to keep C whole.
    c = [1.0 + 2.0 ** -20]
    fp22 = step(c, [[0.0]], tc.Accumulation(bits=24, final_bits=13))
    f32 = step(c, [[0.0]], tc.Accumulation(bits=24, final_bits=23))
    check(fp22[0] == 1.0 and f32[0] == c[0], f"13 mantissa bits drop C's 2^-20, 23 keep it: {fp22[0]}, {f32[0]}")
    # The alignment the probe measured (ref/fp8_mma.h): 1.875 x 3.75 = 7.03125 aligns at its factors'
    # exponents, 0 + 1, so two 2^-6 x 2^-6 stay on its grid of 2^-12; at its own exponent 2 they are
    # cut. e4m3's smallest subnormal 2^-9 times 448 aligns at the field's -6 + 8 (cuts them) or at
    # its own -9 + 8 (keeps them).
    def factors(fa, fb, model):
        a = np.zeros((1, tc.K_STEP))
        b = np.zeros((1, tc.K_STEP))
        a[0, :3], b[0, :3] = fa, fb
        return float(tc.accumulate(np.zeros(1, np.float32), a, b, model)[0])
    big, small = [1.875, 2.0 ** -6, 2.0 ** -6], [3.75, 2.0 ** -6, 2.0 ** -6]
    got = (factors(big, small, tc.Accumulation()), factors(big, small, tc.Accumulation(align_by_factors=False)))
    check(got == (7.03125 + 2.0 ** -11, 7.03125), f"aligned at the factors' exponents or the product's: {got}")
    sub, wide = [2.0 ** -9, 2.0 ** -6, 2.0 ** -6], [448.0, 2.0 ** -6, 2.0 ** -6]
    got = (factors(sub, wide, tc.Accumulation()), factors(sub, wide, tc.Accumulation(factor_min_exponent=None)))
    check(got == (0.875, 0.875 + 2.0 ** -11), f"a subnormal factor at the field's exponent or its own: {got}")
    # bits=None is float32: one rounding per step of the exact sum.
    rng = np.random.default_rng(7)
    p = rng.standard_normal((64, 64))
    exact = tc.accumulate(np.zeros(64, np.float32), p, np.ones_like(p), tc.Accumulation(bits=None))
    want = (p[:, :32].sum(axis=1).astype(np.float32).astype(np.float64) + p[:, 32:].sum(axis=1)).astype(np.float32)
    check(np.array_equal(exact, want), "bits=None: float32 rounding once per step")


def kernel(golden, out, *extra):
    r = run(sys.executable, ROOT / "examples" / "numpy_decode_fp8_tc.py", golden, out, *extra)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit("the example kernel failed")


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    model_cases()
    goldens = ROOT / "data" / "golden"
    not_peaked = ["small_harness", "small_ragged_paged", "small_boundary"]
    f32, tc64, tc = "a8w8", "a8w8:fp8-acc=tc64", "a8w8:fp8-acc=tc"
    for name in not_peaked + ["small_peaked_q4"]:
        golden = goldens / f"{name}.safetensors"
        peaked = name == "small_peaked_q4"
        # (kernel, its options, {(recipe, schedule declared): accepted?}); None: not judged here.
        variants = [
            ("float32", ["--float32"],
             {(f32, True): True, (f32, False): True, (tc64, True): False if peaked else None,
              (tc, True): False if peaked else None}),
            ("13 bits every 64", ["--bits", "13", "--final-bits", "13"],
             {(f32, True): None if peaked else True, (f32, False): True, (tc64, True): True,
              (tc64, False): True}),
            ("13 bits never promoted", ["--run", "0", "--bits", "13", "--final-bits", "13"],
             {(tc, True): True, (tc, False): True, (f32, True): False if peaked else None,
              (f32, False): False if peaked else None}),
        ]
        if not peaked:
            variants += [
                ("6 bits", ["--bits", "6"],
                 {(f32, True): False, (f32, False): False, (tc64, True): False, (tc64, False): False}),
                ("8 bits", ["--bits", "8"], {(f32, True): False, (tc64, True): False}),
            ]
        for tag, extra, wants in variants:
            out = work / f"{name}_{tag.replace(' ', '_')}.safetensors"
            kernel(golden, out, *extra)
            for (recipe, declared), want in wants.items():
                if want is None:
                    continue
                r = run(binary, "compare", golden, out, "--recipe", recipe, *(SCHEDULE if declared else []))
                how = "declared" if declared else "schedule-free"
                check(r.returncode == (0 if want else 1),
                      f"{name}, {tag}, {recipe} {how}: {'accepted' if want else 'rejected'} (exit {r.returncode})")
    if check.failures:
        raise SystemExit(f"{check.failures} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
