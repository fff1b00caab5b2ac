"""A model of how an NVIDIA sm_90 tensor core accumulates fp8 x fp8 products (wgmma ... .e4m3.e4m3).

NVIDIA does not document it. The public descriptions: DeepSeek-V3's report (section 3.3.2, "Increasing
Accumulation Precision") measured that the fp8 GEMM on H800 keeps "around 14 bits" of the sum: the
products are aligned to the largest exponent and cut to a fixed width; SageAttention2 describes the
accumulator as 1 + 8 + 13 bits (FP22), truncated. Triton runs every fp8 x fp8 `tl.dot` on sm_90
this way unless told otherwise (its CUDA backend sets max_num_imprecise_acc_default = 2**30 on
capability 90: the sum is never promoted to float32 inside the dot).

One K step of the instruction (32 products of one output) is modelled as: the products (and the
incoming accumulator C, with align_c) aligned to the largest exponent among them, each cut to
`bits` bits below that exponent (toward zero, or toward -inf for a two's-complement datapath),
summed exactly, the sum then kept to `final_bits` mantissa bits (truncated). `bits=None` is exact
float32 accumulation (one float32 rounding per step). docs/probes/fp8_accumulation.cu measures the
hardware; docs/probes/fp8_accumulation_fit.py searches these parameters for the ones that
reproduce it bit for bit. ref/fp8_mma.h is the same model written separately in C++: what
mlacheck's emulation runs for recipes with fp8-acc=tc64 (this file's defaults are its kSm90Fp8Mma).
"""
from dataclasses import dataclass

import numpy as np

K_STEP = 32  # products per output in one m64nNk32 e4m3 instruction (PTX ISA, wgmma shapes)


@dataclass(frozen=True)
class Accumulation:
    bits: int | None = 13  # bits kept below the step's largest exponent; None: float32
    final_bits: int = 13  # mantissa bits the accumulator keeps (13: FP22, 23: float32)
    align_c: bool = True  # the incoming accumulator takes part in the alignment
    toward: str = "zero"  # how aligned terms are cut: "zero" or "floor"
    group: int = K_STEP  # products aligned together (a K step may add them in smaller groups)
    final_nearest: bool = False  # the accumulator rounds to nearest even instead of truncating

    def describe(self):
        if self.bits is None:
            return "float32 accumulation"
        return (f"{self.bits} bits below the largest exponent of each group of {self.group}"
                f"{' and C' if self.align_c else ''}, cut toward {self.toward}, accumulator "
                f"{self.final_bits} mantissa bits{' rounded to nearest' if self.final_nearest else ''}")


def _exponent(x):
    """floor(log2 |x|), and a very small value for 0 (which never sets the alignment)."""
    with np.errstate(divide="ignore"):
        return np.where(x == 0, -1000.0, np.floor(np.log2(np.abs(x))))


def _keep_mantissa(x, bits, nearest):
    step = np.where(x == 0, 1.0, 2.0 ** (_exponent(x) - bits))
    q = x / step
    return (np.round(q) if nearest else np.trunc(q)) * step  # np.round: half to even


def accumulate(c, products, model):
    """c [N] float32 (the accumulator in), products [N, K] exact (float64), K a multiple of 32.

    Returns the accumulator after the K / 32 steps, float32 [N].
    """
    acc = np.asarray(c, np.float64)
    if products.shape[1] % K_STEP:
        raise ValueError(f"K = {products.shape[1]} is not a multiple of {K_STEP}")
    cut = np.trunc if model.toward == "zero" else np.floor
    for g0 in range(0, products.shape[1], model.group):
        part = products[:, g0:g0 + model.group]
        if model.bits is None:
            acc = (acc + part.sum(axis=1)).astype(np.float32).astype(np.float64)
            continue
        terms = np.concatenate([part, acc[:, None]], axis=1) if model.align_c else part
        step = 2.0 ** (_exponent(terms).max(axis=1) - model.bits)
        total = (cut(terms / step[:, None]) * step[:, None]).sum(axis=1)
        if not model.align_c:
            total = total + acc
        acc = _keep_mantissa(total, model.final_bits, model.final_nearest)
    return acc.astype(np.float32)
