#!/usr/bin/env python3
"""An a8w8 decode kernel whose fp8 x fp8 products accumulate as an sm_90 tensor core's may (NumPy, CPU).

    python examples/numpy_decode_fp8_tc.py GOLDEN OUTPUT [--run 64|0] [--bits 13] [--final-bits 13]
        [--own-exponents] [--float32]

Recipe a8w8 (the harness's: Q quantized per tensor to e4m3fn as NUMERICS §4 says, the golden's e4m3fn
cache with its scale on the scores and the output, P = e4m3fn(exp(s - running max)), base e, the row
sum from the unrounded P). Schedule: numpy_decode.py's (SPLITS ranges of ceil(L / SPLITS) keys,
TILE-key online-softmax steps, the LSE merge). Both products, Q·Kᵀ on the codes and P·V on P's and
V's codes, run through fp8_tensorcore.accumulate:
- --run 64 (default): a fresh accumulator for every 64 products, added to a float32 sum: Q·Kᵀ per
  64-dim box, P·V per 64-key tile (the a8w8 hopper kernels, gpu/hopper/config.h
  kE4m3PromoteScores / kE4m3PromoteOutputs);
- --run 0: never promoted: the whole 576-dim dot, and a split's P·V with the float32 accumulator
  (scaled by the softmax correction) fed back as C every tile (Triton's default on sm_90).
--float32 accumulates in float32 instead (the control). Writes out, lse, partial_out, partial_lse.
"""
import argparse
import json
import math
import struct

import ml_dtypes  # registers bfloat16 with numpy before any tensor is read
import numpy as np
from safetensors.numpy import save_file

import fp8_tensorcore as tc
import numpy_decode as nd

F32 = np.float32
E4M3 = ml_dtypes.float8_e4m3fn
E4M3_MAX = 448.0  # largest finite e4m3fn value
SM_SCALE = F32(1.0 / math.sqrt(nd.QK_DIM))

SPLITS, TILE, RUN = 4, 64, 64
MODEL = tc.Accumulation()


def read_tensors(path, names):
    """Raw safetensors read: safe_open cannot hand out the golden's F8_E4M3 cache to NumPy."""
    dtypes = {"BF16": ml_dtypes.bfloat16, "F32": np.float32, "I32": np.int32, "F8_E4M3": E4M3}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        out = {}
        for name in names:
            if name not in header:
                continue
            v = header[name]
            f.seek(8 + n + v["data_offsets"][0])
            raw = f.read(v["data_offsets"][1] - v["data_offsets"][0])
            out[name] = np.frombuffer(raw, dtypes[v["dtype"]]).reshape(v["shape"])
    meta = header.get("__metadata__", {})
    return out, int(meta.get("page_size", "1"))


def quantize_fp8(x):
    """The harness's quantize_fp8 (NUMERICS §4): values of the codes and the float32 scale."""
    bf16 = ml_dtypes.bfloat16
    amax = max(F32(bf16(np.abs(x.astype(F32)).max())), F32(bf16(1e-12)))
    scale = F32(bf16(F32(amax * F32(1 / E4M3_MAX))))
    y = np.clip((x.astype(F32) / scale).astype(bf16).astype(F32), -E4M3_MAX, E4M3_MAX)
    return y.astype(E4M3).astype(F32), scale


def promoted(a, b):
    """Sum of the products of factors a, b [N, K] through the tensor core, promoted to float32
    every RUN products."""
    n, k = a.shape
    if RUN == 0:
        return tc.accumulate(np.zeros(n, F32), a, b, MODEL)
    total = np.zeros(n, F32)
    for k0 in range(0, k, RUN):
        run = slice(k0, k0 + RUN)
        total = (total + tc.accumulate(np.zeros(n, F32), a[:, run], b[:, run], MODEL)).astype(F32)
    return total


def split_partials(q, k, n_req, n_visible, score_scale, kv_scale):
    """q [16, 576] and k [n, 576]: code values (float64). Returns partial out / lse of the splits."""
    p_out = np.zeros((SPLITS, nd.HEADS, nd.V_DIM), F32)
    p_lse = np.full((SPLITS, nd.HEADS), -np.inf, F32)
    chunk = -(-n_req // SPLITS)
    for s in range(SPLITS):
        lo, hi = s * chunk, min((s + 1) * chunk, n_visible)
        if lo >= hi:
            continue
        m = np.full(nd.HEADS, -np.inf, F32)
        l = np.zeros(nd.HEADS, F32)
        acc = np.zeros((nd.HEADS, nd.V_DIM), F32)
        for t0 in range(lo, hi, TILE):
            kt = k[t0:min(t0 + TILE, hi)]
            n = kt.shape[0]
            shape = (nd.HEADS, n, nd.QK_DIM)
            dots = promoted(np.broadcast_to(q[:, None, :], shape).reshape(-1, nd.QK_DIM),
                            np.broadcast_to(kt[None, :, :], shape).reshape(-1, nd.QK_DIM))
            x = (dots.reshape(nd.HEADS, n) * score_scale).astype(F32)
            m_new = np.maximum(m, x.max(axis=1))
            alpha = np.exp(m - m_new).astype(F32)
            p = np.exp(x - m_new[:, None]).astype(F32)
            l = (l * alpha + p.sum(axis=1, dtype=F32)).astype(F32)
            acc = (acc * alpha[:, None]).astype(F32)
            # P·V's K runs over the tile's keys, padded with zero products to whole K steps.
            width = -(-n // tc.K_STEP) * tc.K_STEP
            pa = np.zeros((nd.HEADS, nd.V_DIM, width))
            vb = np.zeros((nd.HEADS, nd.V_DIM, width))
            pa[:, :, :n] = p.astype(E4M3).astype(np.float64)[:, None, :]
            vb[:, :, :n] = kt[:, :nd.V_DIM].T[None]
            pa, vb = pa.reshape(-1, width), vb.reshape(-1, width)
            if RUN == 0:  # the float32 accumulator is the instruction's C
                acc = tc.accumulate(acc.reshape(-1), pa, vb, MODEL).reshape(nd.HEADS, nd.V_DIM)
            else:
                acc = (acc + promoted(pa, vb).reshape(nd.HEADS, nd.V_DIM)).astype(F32)
            m = m_new
        p_out[s] = (acc / l[:, None] * kv_scale).astype(F32)
        p_lse[s] = m + np.log(l)
    return p_out, p_lse


def decode(path):
    t, page_size = read_tensors(path, ["q", "kv_fp8", "kv_fp8_scale", "qo_indptr", "kv_indptr",
                                       "kv_indices"])
    q8, q_scale = quantize_fp8(t["q"])
    kv8 = t["kv_fp8"][:, 0, :].astype(np.float64)
    kv_scale = F32(t["kv_fp8_scale"][0])
    score_scale = F32(F32(q_scale * kv_scale) * SM_SCALE)
    qo, kvp, idx = t["qo_indptr"], t["kv_indptr"], t.get("kv_indices")
    p_out = np.zeros((q8.shape[0], SPLITS, nd.HEADS, nd.V_DIM), F32)
    p_lse = np.full((q8.shape[0], SPLITS, nd.HEADS), -np.inf, F32)
    for b in range(len(kvp) - 1):
        k = kv8[nd.key_rows(kvp, idx, page_size, b)]
        q_len = int(qo[b + 1] - qo[b])
        for i in range(q_len):
            row = int(qo[b]) + i
            visible = max(len(k) - q_len + i + 1, 0)  # causal rule
            p_out[row], p_lse[row] = split_partials(q8[row].astype(np.float64), k[:visible], len(k),
                                                    visible, score_scale, kv_scale)
    out, lse = nd.merge(p_out, p_lse)
    return {"out": out.astype(ml_dtypes.bfloat16), "lse": lse, "partial_out": p_out,
            "partial_lse": p_lse}


def main():
    global SPLITS, TILE, RUN, MODEL
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("golden")
    ap.add_argument("output")
    ap.add_argument("--splits", type=int, default=SPLITS)
    ap.add_argument("--tile", type=int, default=TILE)
    ap.add_argument("--run", type=int, default=RUN, choices=[0, 32, 64, 128],
                    help="products per fresh accumulator (0: never promoted)")
    ap.add_argument("--bits", type=int, default=MODEL.bits)
    ap.add_argument("--final-bits", type=int, default=MODEL.final_bits)
    ap.add_argument("--toward", choices=["zero", "floor"], default=MODEL.toward)
    ap.add_argument("--no-align-c", action="store_true")
    ap.add_argument("--own-exponents", action="store_true",
                    help="align a product at its own exponent, not its factors' (the model the probe ruled out)")
    ap.add_argument("--float32", action="store_true", help="float32 accumulation (the control)")
    a = ap.parse_args()
    if a.run and a.tile % a.run:
        raise SystemExit("--tile must be a multiple of --run")
    SPLITS, TILE, RUN = a.splits, a.tile, a.run
    MODEL = tc.Accumulation(bits=None if a.float32 else a.bits, final_bits=a.final_bits,
                            align_c=not a.no_align_c, toward=a.toward,
                            align_by_factors=not a.own_exponents)
    save_file(decode(a.golden), a.output)


if __name__ == "__main__":
    main()
