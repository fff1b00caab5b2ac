#!/usr/bin/env python3
"""How far skipping the rope dims moves each row's LSE, beside how far correct kernels move it.

The measurement behind README "The gate's power": on outlier data under a16w16 (bf16 P) the
schedule-free gate accepts skip-rope. This computes, independently of mlacheck's reference (fp64
NumPy from the golden file's bf16 q and kv), per (request, head) row:
  - the LSE of a single pass summing the unrounded P (the reference point);
  - the LSE of correct kernels that sum the row sum l from their bf16-rounded P, with several
    schedules (splits x softmax tile), and of one that sums the unrounded P with another schedule;
  - the LSE of skip-rope (scores over dims 0..511 only), summing unrounded P and rounded P;
and prints the RMS and largest shift of each over the rows, with the spread of the scores and of
their rope part. A bug whose LSE shift is no larger than a correct rounded-P kernel's cannot be
told from one by its LSE without declaring how the kernel sums l.

Usage: skip_rope_resolution.py GOLDEN.safetensors   (uniform q_len = 1 batches; run with the
project's venv: numpy, ml_dtypes, safetensors)
"""
import argparse
import math

import ml_dtypes  # registers bfloat16 with NumPy before any tensor is read
import numpy as np
from safetensors import safe_open

SCALE = 1 / math.sqrt(576)  # NUMERICS: softmax scale of the 576-dim scores
BF16 = ml_dtypes.bfloat16


def lse(scores, splits, tile, rounded_sum):
    """Online softmax over `splits` equal splits in `tile`-key steps, splits merged in fp64."""
    n = len(scores)
    per = -(-n // splits)
    parts = []
    for first in range(0, n, per):
        s = scores[first:first + per]
        m, l = -np.inf, 0.0
        for k in range(0, len(s), tile):
            t = s[k:k + tile]
            m_new = max(m, t.max())
            p = np.exp(t - m_new)
            if rounded_sum:
                p = p.astype(np.float32).astype(BF16).astype(np.float64)
            l = l * math.exp(m - m_new) + p.sum()
            m = m_new
        parts.append(m + math.log(l))
    parts = np.array(parts)
    top = parts.max()
    return top + math.log(np.exp(parts - top).sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("golden")
    args = ap.parse_args()
    with safe_open(args.golden, "np") as f:
        q = f.get_tensor("q").astype(np.float64).reshape(-1, 16, 576)
        kv = f.get_tensor("kv").astype(np.float64).reshape(-1, 576)
        kv_indptr = f.get_tensor("kv_indptr")
    if len(kv_indptr) - 1 != q.shape[0]:
        raise SystemExit("expected one query per request (q_len = 1)")
    kernels = {
        "correct, unrounded l, 7 splits x 16-key tiles": (False, 7, 16, False),
        "correct, l from bf16 P, single pass": (False, 1, None, True),
        "correct, l from bf16 P, 7 splits x 16-key tiles": (False, 7, 16, True),
        "correct, l from bf16 P, 256 splits x 64-key tiles": (False, 256, 64, True),
        "correct, l from bf16 P, one key per step": (False, 1, 1, True),
        "skip-rope, unrounded l, single pass": (True, 1, None, False),
        "skip-rope, l from bf16 P, 7 splits x 16-key tiles": (True, 7, 16, True),
    }
    shifts = {name: [] for name in kernels}
    spread, rope_spread = [], []
    for r in range(q.shape[0]):
        k = kv[kv_indptr[r]:kv_indptr[r + 1]]
        for h in range(16):
            full = (k @ q[r, h]) * SCALE
            latent = (k[:, :512] @ q[r, h, :512]) * SCALE
            spread.append(full.std())
            rope_spread.append((full - latent).std())
            ref = lse(full, 1, len(full), False)
            for name, (skip, splits, tile, rounded) in kernels.items():
                s = latent if skip else full
                shifts[name].append(lse(s, splits, tile or len(s), rounded) - ref)
    print(f"{args.golden}: {q.shape[0]} requests x 16 heads")
    print(f"score std per row (mean): {np.mean(spread):.3e}; of its rope part: {np.mean(rope_spread):.3e}; "
          f"bf16 P's relative half-ulp: {2.0 ** -9:.3e}")
    print(f"{'LSE shift against the single pass with unrounded l':55s} {'RMS':>10s} {'max':>10s}")
    for name, v in shifts.items():
        v = np.abs(np.array(v))
        print(f"{name:55s} {math.sqrt((v ** 2).mean()):10.3e} {v.max():10.3e}")


if __name__ == "__main__":
    main()
