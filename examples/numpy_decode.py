#!/usr/bin/env python3
"""A worked example of a third-party MLA decode kernel, in NumPy (CPU only).

It reads the inputs of an mlacheck golden file, runs its own split-K schedule and writes what a
GPU kernel would write: the bf16 output, the per-head log-sum-exp and the split partials, so that
`mlacheck compare / identify / drift` can judge it (see README.md next to this file).

    python examples/numpy_decode.py GOLDEN OUTPUT

Recipe a16w16 (bf16 Q, bf16 KV, P rounded to bf16, float32 everywhere else), softmax in base 2.
Schedule (the constants below): every request is cut into SPLITS ranges of ceil(L / SPLITS) keys
(trailing ranges may be empty); inside a range, an online softmax over TILE-key tiles; then an
LSE merge of the ranges.
"""
import argparse
import math

# ml_dtypes must be imported BEFORE any safetensors tensor is loaded: importing it registers the
# 'bfloat16' dtype with numpy; without it numpy raises
#   TypeError: data type 'bfloat16' not understood
import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

# --- the problem -------------------------------------------------------------------------------
HEADS = 16
QK_DIM = 576  # 512 latent + 64 rope
V_DIM = 512  # the value is the first 512 dims of the same cache row
SM_SCALE = np.float32(1.0 / math.sqrt(QK_DIM))

# --- this kernel's schedule and numerics (the defaults; main() can override them, so the same
# kernel also serves tests that need another split count, tile, base or P format) ----------------
SPLITS = 4  # split-K ranges per request
TILE = 64  # keys per online-softmax step inside a range
BASE2 = True  # softmax in base 2 (exp2 of scores scaled by log2 e)
P_TYPE = "bf16"  # what P is rounded to before P.V: bf16, f16 or f32 (not rounded)
L_ROUNDED = False  # sum the row sum l from the rounded P (the P that multiplies V), as some kernels do
Q_PRESCALED = False  # q x the softmax scale rounded to bf16 before Q.K (recipe field q=bf16-scaled)

LOG2E = np.float32(math.log2(math.e))
LN2 = np.float32(math.log(2.0))
F32 = np.float32
BF16 = ml_dtypes.bfloat16


def load_inputs(path):
    """The inputs of a golden file, as numpy arrays, plus its page size."""
    # Only the tensors the kernel needs are read: safetensors.numpy.load_file reads every tensor
    # and fails on the golden's FP8 caches (F8_E4M3 / F8_E8M0 have no numpy dtype of that name).
    names = ["q", "kv", "qo_indptr", "kv_indptr", "kv_indices"]
    with safe_open(path, "np") as f:
        present = set(f.keys())
        t = {n: f.get_tensor(n) for n in names if n in present}
        meta = f.metadata() or {}
    t.setdefault("kv_indices", None)
    return t, int(meta.get("page_size", "1"))


def key_rows(kv_indptr, kv_indices, page_size, b):
    """Cache rows of the keys 0 .. L-1 of request b (problem/batch.h)."""
    start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
    t = np.arange(end - start)
    if kv_indices is None:  # contiguous cache
        return start + t
    # Paged: request j owns ceil(L_j / page_size) consecutive entries of kv_indices.
    lens = np.diff(kv_indptr[: b + 1].astype(np.int64))
    first_page = int(np.sum((lens + page_size - 1) // page_size))
    pages = kv_indices[first_page + t // page_size].astype(np.int64)
    return pages * page_size + t % page_size


def split_partials(q, k, v, n_req, n_visible):
    """One query row through the split-K schedule.

    q [16,576], k [n_visible,576], v [n_visible,512] float32 (bf16 values widened).
    n_req: the request's key count (the split boundaries); n_visible: keys this row sees.
    Returns partial_out [SPLITS,16,512] and partial_lse [SPLITS,16] (natural log), float32.
    """
    p_out = np.zeros((SPLITS, HEADS, V_DIM), F32)
    p_lse = np.full((SPLITS, HEADS), -np.inf, F32)
    chunk = -(-n_req // SPLITS)  # ceil(L / SPLITS)
    for s in range(SPLITS):
        lo, hi = s * chunk, min((s + 1) * chunk, n_visible)
        if lo >= hi:
            continue  # empty split: out 0, lse -inf
        m = np.full(HEADS, -np.inf, F32)  # running max, base-2 units
        l = np.zeros(HEADS, F32)  # running sum of the unrounded p
        acc = np.zeros((HEADS, V_DIM), F32)
        for t0 in range(lo, hi, TILE):
            t1 = min(t0 + TILE, hi)
            if Q_PRESCALED:  # the scale is in q already
                x = q @ k[t0:t1].T
            else:
                x = (q @ k[t0:t1].T) * SM_SCALE  # [16, n] float32
                if BASE2:
                    x = x * LOG2E
            exp = np.exp2 if BASE2 else np.exp
            m_new = np.maximum(m, x.max(axis=1))
            alpha = exp(m - m_new)  # 0 on the first tile (m = -inf)
            p = exp(x - m_new[:, None])
            p_rounded = round_p(p)  # P into P.V
            l = l * alpha + (p_rounded if L_ROUNDED else p).sum(axis=1, dtype=F32)
            acc = acc * alpha[:, None] + p_rounded @ v[t0:t1]
            m = m_new
        p_out[s] = acc / l[:, None]
        p_lse[s] = (m + np.log2(l)) * LN2 if BASE2 else m + np.log(l)
    return p_out, p_lse


def round_p(p):
    """P rounded to P_TYPE (float32 in, float32 out)."""
    if P_TYPE == "bf16":
        return p.astype(BF16).astype(F32)
    if P_TYPE == "f16":
        return p.astype(np.float16).astype(F32)
    return p


def merge(partial_out, partial_lse):
    """LSE merge of the splits: [..., S, 16, 512] and [..., S, 16] -> out [..., 16, 512], lse [..., 16]."""
    big = partial_lse.max(axis=-2)  # [..., 16]
    seen = np.isfinite(big)  # False: the row saw no key at all
    w = np.exp(partial_lse - np.where(seen, big, F32(0))[..., None, :])  # empty split -> 0
    return finish_merge(partial_out, w, big, seen)


def finish_merge(partial_out, w, big, seen):
    """out = sum_s w_s * out_s / sum_s w_s, lse = M + log(sum_s w_s); unseen rows: 0 and -inf."""
    total = w.sum(axis=-2)  # [..., 16]
    safe = np.where(seen, total, F32(1))
    out = (w[..., None] * partial_out).sum(axis=-3) / safe[..., None]
    out = np.where(seen[..., None], out, F32(0)).astype(F32)
    lse = np.where(seen, big + np.log(safe), F32(-np.inf)).astype(F32)
    return out, lse


def decode(t, page_size, merge_fn=merge):
    """The whole call: dict of the output tensors."""
    q, kv = t["q"], t["kv"]
    if Q_PRESCALED:  # float32 q x fl32(scale), rounded to bf16
        scale = F32(1.0 / math.sqrt(QK_DIM) * (math.log2(math.e) if BASE2 else 1.0))
        q = (q.astype(F32) * scale).astype(BF16)
    qo, kvp, idx = t["qo_indptr"], t["kv_indptr"], t["kv_indices"]
    n_q = q.shape[0]
    p_out = np.zeros((n_q, SPLITS, HEADS, V_DIM), F32)
    p_lse = np.full((n_q, SPLITS, HEADS), -np.inf, F32)
    for b in range(len(kvp) - 1):
        rows = key_rows(kvp, idx, page_size, b)
        k = kv[rows, 0, :].astype(F32)  # [L, 576]
        v = k[:, :V_DIM]
        n_req = len(rows)
        q_len = int(qo[b + 1] - qo[b])
        for i in range(q_len):
            row = int(qo[b]) + i
            n_visible = max(n_req - q_len + i + 1, 0)  # causal rule
            p_out[row], p_lse[row] = split_partials(
                q[row].astype(F32), k[:n_visible], v[:n_visible], n_req, n_visible)
    out, lse = merge_fn(p_out, p_lse)
    return {"out": out.astype(BF16), "lse": lse, "partial_out": p_out, "partial_lse": p_lse}


def main(argv=None, merge_fn=merge):
    global SPLITS, TILE, BASE2, P_TYPE, L_ROUNDED, Q_PRESCALED
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("golden", help="mlacheck golden file (inputs are read from it)")
    ap.add_argument("output", help="safetensors file to write: out, lse, partial_out, partial_lse")
    ap.add_argument("--splits", type=int, default=SPLITS, help="split-K ranges per request")
    ap.add_argument("--tile", type=int, default=TILE, help="keys per online-softmax step")
    ap.add_argument("--base", choices=["e", "2"], default="2" if BASE2 else "e")
    ap.add_argument("--p", choices=["bf16", "f16", "f32"], default=P_TYPE)
    ap.add_argument("--l-rounded", action="store_true",
                    help="sum the row sum from the rounded P instead of the unrounded one")
    ap.add_argument("--q-prescaled", action="store_true",
                    help="multiply q by the softmax scale (x log2 e in base 2) and round it to bf16 "
                         "before Q.K, as Triton kernels that pre-scale q do (recipe field q=bf16-scaled)")
    args = ap.parse_args(argv)
    SPLITS, TILE, BASE2, P_TYPE = args.splits, args.tile, args.base == "2", args.p
    L_ROUNDED, Q_PRESCALED = args.l_rounded, args.q_prescaled
    t, page_size = load_inputs(args.golden)
    result = decode(t, page_size, merge_fn)
    save_file(result, args.output)


if __name__ == "__main__":
    main()
