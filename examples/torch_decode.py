#!/usr/bin/env python3
"""numpy_decode.py in PyTorch: the same a16w16 kernel and schedule, float32 on CUDA if available.

    python examples/torch_decode.py GOLDEN OUTPUT

Schedule: SPLITS ranges of ceil(L / SPLITS) keys per request, TILE-key online softmax in base 2
inside a range, P rounded to bf16 before P.V, then an LSE merge. Writes out (bf16), lse,
partial_out and partial_lse (float32), as numpy_decode.py does.
"""
import argparse

import torch
from safetensors import safe_open  # ships with safetensors.torch; reads only the tensors named
from safetensors.torch import save_file

HEADS, QK_DIM, V_DIM = 16, 576, 512
SPLITS = 4  # split-K ranges per request
TILE = 64  # keys per online-softmax step inside a range

F32 = torch.float32
DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# float32 constants, the same values as numpy_decode.py: 1/sqrt(576) = 1/24, log2(e), ln(2)
SM_SCALE = torch.tensor(1.0 / 24.0, dtype=F32, device=DEV)
LOG2E = torch.tensor(1.4426950408889634, dtype=F32, device=DEV)
LN2 = torch.tensor(0.6931471805599453, dtype=F32, device=DEV)
NEG_INF = float("-inf")


def load_inputs(path):
    # Only the tensors the kernel needs: the golden's FP8 caches need not load on every torch.
    with safe_open(path, "pt") as f:
        present = set(f.keys())
        t = {n: f.get_tensor(n) for n in ("q", "kv", "qo_indptr", "kv_indptr", "kv_indices")
             if n in present}
        page_size = int((f.metadata() or {}).get("page_size", "1"))
    return t, page_size


def key_rows(kv_indptr, kv_indices, page_size, b):
    """Cache rows of the keys 0 .. L-1 of request b (problem/batch.h); kv_indptr is a list."""
    start, end = kv_indptr[b], kv_indptr[b + 1]
    t = torch.arange(end - start, dtype=torch.int64)
    if kv_indices is None:  # contiguous cache
        return start + t
    # Paged: request j owns ceil(L_j / page_size) consecutive entries of kv_indices.
    first_page = sum(-(-(kv_indptr[j + 1] - kv_indptr[j]) // page_size) for j in range(b))
    pages = kv_indices[first_page + t // page_size].to(torch.int64)
    return pages * page_size + t % page_size


def split_partials(q, k, v, n_req, n_visible):
    """One query row: q [16,576], k [n_visible,576], v [n_visible,512] float32 on DEV."""
    p_out = torch.zeros(SPLITS, HEADS, V_DIM, dtype=F32, device=DEV)
    p_lse = torch.full((SPLITS, HEADS), NEG_INF, dtype=F32, device=DEV)
    chunk = -(-n_req // SPLITS)  # ceil(L / SPLITS)
    for s in range(SPLITS):
        lo, hi = s * chunk, min((s + 1) * chunk, n_visible)
        if lo >= hi:
            continue  # empty split: out 0, lse -inf
        m = torch.full((HEADS,), NEG_INF, dtype=F32, device=DEV)
        l = torch.zeros(HEADS, dtype=F32, device=DEV)
        acc = torch.zeros(HEADS, V_DIM, dtype=F32, device=DEV)
        for t0 in range(lo, hi, TILE):
            t1 = min(t0 + TILE, hi)
            x = ((q @ k[t0:t1].T) * SM_SCALE) * LOG2E  # [16, n]
            m_new = torch.maximum(m, x.amax(dim=1))
            alpha = torch.exp2(m - m_new)  # 0 on the first tile (m = -inf)
            p = torch.exp2(x - m_new[:, None])
            l = l * alpha + p.sum(dim=1)
            p_bf16 = p.to(torch.bfloat16).to(F32)  # P into P.V is bf16
            acc = acc * alpha[:, None] + p_bf16 @ v[t0:t1]
            m = m_new
        p_out[s] = acc / l[:, None]
        p_lse[s] = (m + torch.log2(l)) * LN2
    return p_out, p_lse


def merge(partial_out, partial_lse):
    """[T,S,16,512], [T,S,16] -> out [T,16,512], lse [T,16]; a row with no key: 0 and -inf."""
    big = partial_lse.amax(dim=1)
    seen = torch.isfinite(big)
    w = torch.exp(partial_lse - torch.where(seen, big, torch.zeros_like(big))[:, None, :])
    total = w.sum(dim=1)
    safe = torch.where(seen, total, torch.ones_like(total))
    out = (w[..., None] * partial_out).sum(dim=1) / safe[..., None]
    out = torch.where(seen[..., None], out, torch.zeros_like(out))
    lse = torch.where(seen, big + torch.log(safe), torch.full_like(big, NEG_INF))
    return out, lse


def decode(t, page_size):
    q = t["q"].to(DEV).to(F32)  # [T,16,576]
    kv = t["kv"].to(DEV).to(F32)[:, 0, :]  # [N,576]
    qo, kvp = t["qo_indptr"].tolist(), t["kv_indptr"].tolist()
    idx = t.get("kv_indices")
    p_out = torch.zeros(q.shape[0], SPLITS, HEADS, V_DIM, dtype=F32, device=DEV)
    p_lse = torch.full((q.shape[0], SPLITS, HEADS), NEG_INF, dtype=F32, device=DEV)
    for b in range(len(kvp) - 1):
        rows = key_rows(kvp, idx, page_size, b)
        k = kv[rows.to(DEV)]  # [L,576]
        v = k[:, :V_DIM]
        n_req, q_len = len(rows), qo[b + 1] - qo[b]
        for i in range(q_len):
            n_visible = max(n_req - q_len + i + 1, 0)  # causal rule
            row = qo[b] + i
            p_out[row], p_lse[row] = split_partials(q[row], k[:n_visible], v[:n_visible],
                                                    n_req, n_visible)
    out, lse = merge(p_out, p_lse)
    result = {"out": out.to(torch.bfloat16), "lse": lse, "partial_out": p_out, "partial_lse": p_lse}
    return {n: x.cpu().contiguous() for n, x in result.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("golden", help="mlacheck golden file (inputs are read from it)")
    ap.add_argument("output", help="safetensors file to write: out, lse, partial_out, partial_lse")
    args = ap.parse_args()
    torch.set_float32_matmul_precision("highest")  # no TF32: the recipe says float32 products
    t, page_size = load_inputs(args.golden)
    save_file(decode(t, page_size), args.output)


if __name__ == "__main__":
    main()
