"""A model of how an NVIDIA sm_90 tensor core accumulates fp8 x fp8 products (wgmma ... .e4m3.e4m3).

NVIDIA does not document it. docs/probes/fp8_accumulation.cu measured it on an H100 and an H200
(2026-12-05) and docs/probes/fp8_accumulation_fit.py found this file's defaults to reproduce every
output bit for bit (a subnormal factor aligned at its field's exponent, -6): one K step of the instruction (32 products of one output) and the incoming accumulator C
are aligned at the largest exponent among them, a product's exponent being the sum of its factors'
(its significand, a product of two in [1, 2), may reach [2, 4): the "around 14 bits" of
DeepSeek-V3's report, section 3.3.2); each is cut to `bits` bits below it (toward zero, or toward
-inf for a two's-complement datapath), the terms summed exactly, the sum kept to `final_bits`
mantissa bits (truncated: an FP22 accumulator, as SageAttention2 describes it). `bits=None` is
exact float32 accumulation (one float32 rounding per step). Triton runs every fp8 x fp8 `tl.dot` on
sm_90 this way unless told otherwise (its CUDA backend sets max_num_imprecise_acc_default = 2**30
on capability 90: the sum is never promoted to float32 inside the dot). ref/fp8_mma.h is the same
model written separately in C++: what mlacheck's emulation runs for recipes with fp8-acc=tc64 / tc
(this file's defaults are its kSm90Fp8Mma).
"""
from dataclasses import dataclass

import numpy as np

K_STEP = 32  # products per output in one m64nNk32 e4m3 instruction (PTX ISA, wgmma shapes)
E4M3_MIN_EXPONENT = -6  # e4m3fn's smallest normal exponent, where its subnormals' field points


@dataclass(frozen=True)
class Accumulation:
    bits: int | None = 13  # bits kept below the step's largest exponent; None: float32
    final_bits: int = 13  # mantissa bits the accumulator keeps (13: FP22, 23: float32)
    align_c: bool = True  # the incoming accumulator takes part in the alignment
    toward: str = "zero"  # how aligned terms are cut: "zero" or "floor"
    group: int = K_STEP  # products aligned together (a K step may add them in smaller groups)
    final_nearest: bool = False  # the accumulator rounds to nearest even instead of truncating
    align_by_factors: bool = True  # a product aligns at its factors' exponents summed, else its own
    factor_min_exponent: int | None = E4M3_MIN_EXPONENT  # a subnormal factor's (None: its own)

    def describe(self):
        if self.bits is None:
            return "float32 accumulation"
        at = ("products at their factors' exponents" + (
            f" (subnormal factors at {self.factor_min_exponent})" if self.factor_min_exponent is not None
            else " (subnormal factors at their own)") if self.align_by_factors else "products at their own exponents")
        return (f"{self.bits} bits below the largest exponent of each group of {self.group}"
                f"{' and C' if self.align_c else ''} ({at}), cut toward {self.toward}, accumulator "
                f"{self.final_bits} mantissa bits{' rounded to nearest' if self.final_nearest else ''}")


def _exponent(x):
    """floor(log2 |x|), and a very small value for 0 (which never sets the alignment)."""
    with np.errstate(divide="ignore"):
        return np.where(x == 0, -1000.0, np.floor(np.log2(np.abs(x))))


def _keep_mantissa(x, bits, nearest):
    step = np.where(x == 0, 1.0, 2.0 ** (_exponent(x) - bits))
    q = x / step
    return (np.round(q) if nearest else np.trunc(q)) * step  # np.round: half to even


def _factor_exponent(x, model):
    e = _exponent(x)
    return e if model.factor_min_exponent is None else np.maximum(e, model.factor_min_exponent)


def accumulate(c, a, b, model):
    """c [N] float32 (the accumulator in), a and b [N, K] the products' factors (fp8 values, so each
    product is exact in float64), K a multiple of 32.

    Returns the accumulator after the K / 32 steps, float32 [N].
    """
    acc = np.asarray(c, np.float64)
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape or a.shape[1] % K_STEP:
        raise ValueError(f"factors {a.shape} and {b.shape}: not one shape with K a multiple of {K_STEP}")
    cut = np.trunc if model.toward == "zero" else np.floor
    for g0 in range(0, a.shape[1], model.group):
        fa, fb = a[:, g0:g0 + model.group], b[:, g0:g0 + model.group]
        part = fa * fb
        if model.bits is None:
            acc = (acc + part.sum(axis=1)).astype(np.float32).astype(np.float64)
            continue
        if model.align_by_factors:
            at = np.where(part == 0, -1000.0, _factor_exponent(fa, model) + _factor_exponent(fb, model))
        else:
            at = _exponent(part)
        largest = at.max(axis=1)
        if model.align_c:
            largest = np.maximum(largest, _exponent(acc))
            terms = np.concatenate([part, acc[:, None]], axis=1)
        else:
            terms = part
        step = 2.0 ** (largest - model.bits)
        total = (cut(terms / step[:, None]) * step[:, None]).sum(axis=1)
        if not model.align_c:
            total = total + acc
        acc = _keep_mantissa(total, model.final_bits, model.final_nearest)
    return acc.astype(np.float32)
