#!/usr/bin/env python3
"""FlashMLA's dense bf16 decode (deepseek-ai/FlashMLA, sm_90a), timed on the GPU machine for a
same-run comparison with `mlacheck bench` (issue 10's bar for bf16: the better of FlashMLA and
FlashInfer on every row).

The kernels come from libflashmla_decode.so (build.sh: FlashMLA's own sources behind capi.cu's C
interface), called through ctypes on torch tensors: no torch extension to build. Per shape (the
harness shapes of `mlacheck bench`, q_len 1): q and the paged cache random (randn x 0.02, bf16,
as flashinfer-bench's), pages of 64 in a random order; the scheduling metadata made once (untimed,
as FlashMLA's get_mla_metadata is shared by a step's layers); the output checked against a float32
reference (relative Frobenius error); then triton.testing.do_bench's median (L2 cleared before each
repetition) of an eager call and of a CUDA-graph replay of it.

Besides the uniform shapes, `--inputs NAME=FILE` takes a batch's lengths from the kv_indptr of an
mlacheck inputs file (`mlacheck gen --inputs-only`, q_len 1), so that a ragged or paged case of
mlacheck's is timed on the very same lengths (the values are this script's own random ones). A
request of no key stays empty (FlashMLA's scheduler takes length 0); its output must be zero.

usage: bench.py --lib libflashmla_decode.so [--shapes bs4_kv1024,...] [--inputs NAME=FILE ...] [--out DIR]
"""
import argparse
import ctypes
import json
import math
import os
import struct
import sys
import time

HEADS, DK, DV, PAGE = 16, 576, 512, 64
SHAPES = ['bs4_kv1024', 'bs4_kv8192', 'bs32_kv1024', 'bs32_kv8192', 'bs64_kv1024', 'bs64_kv8192',
          'bs256_kv1024', 'bs256_kv8192']
REL_LIMIT = 1e-2  # a bf16 output against the float32 reference: well above bf16 rounding, far below a wrong kernel


def parse_shape(name):
    try:
        b, kv = name.split('_')
        return int(b.removeprefix('bs')), int(kv.removeprefix('kv'))
    except ValueError:
        sys.exit(f'bench.py: shape {name!r} is not bs<B>_kv<L>')


def mlacheck_lengths(path):
    """The per-request key counts of an mlacheck inputs file (safetensors: kv_indptr I32 [B + 1],
    qo_indptr I32 [B + 1] with one query a request). Read with the standard library: an 8-byte
    little-endian header size, the JSON header, then the raw tensors."""
    try:
        with open(path, 'rb') as f:
            (size,) = struct.unpack('<Q', f.read(8))
            if size > 100_000_000:
                raise ValueError(f'a header of {size} bytes')
            header = json.loads(f.read(size))
            base = 8 + size

            def read_i32(name):
                t = header.get(name)
                if t is None or t.get('dtype') != 'I32' or len(t.get('shape', [])) != 1:
                    raise ValueError(f'no I32 vector {name}')
                start, end = t['data_offsets']
                f.seek(base + start)
                data = f.read(end - start)
                if len(data) != 4 * t['shape'][0]:
                    raise ValueError(f'{name} truncated')
                return list(struct.unpack(f'<{t["shape"][0]}i', data))

            kv, qo = read_i32('kv_indptr'), read_i32('qo_indptr')
    except (OSError, ValueError, KeyError, struct.error) as e:
        sys.exit(f'bench.py: {path}: {e}')
    if len(qo) != len(kv) or any(qo[i] != i for i in range(len(qo))):
        sys.exit(f'bench.py: {path}: not one query a request (this bench times q_len 1)')
    lengths = [kv[i + 1] - kv[i] for i in range(len(kv) - 1)]
    if not lengths or min(lengths) < 0:
        sys.exit(f'bench.py: {path}: no request, or a negative length')
    return lengths


def load(lib_path):
    lib = ctypes.CDLL(lib_path)
    p, i, f = ctypes.c_void_p, ctypes.c_int, ctypes.c_float
    lib.fmla_num_sm_parts.argtypes = [i, i]
    lib.fmla_sched_meta_ints.argtypes = []
    lib.fmla_plan.argtypes = [i, i, p, p, p, i, p]
    lib.fmla_decode.argtypes = [i, i, p, p, i, p, i, p, f, p, p, i, p, p, p, p, p]
    return lib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--lib', required=True)
    ap.add_argument('--shapes', default=','.join(SHAPES), help="uniform shapes bs<B>_kv<L>; '' for none")
    ap.add_argument('--inputs', action='append', default=[], metavar='NAME=FILE',
                    help="a batch of an mlacheck inputs file's lengths, reported as NAME")
    ap.add_argument('--out', default=os.environ.get('OUT', '.'))
    ap.add_argument('--warmup-ms', type=int, default=25)
    ap.add_argument('--rep-ms', type=int, default=100)
    args = ap.parse_args()
    import torch
    from triton.testing import do_bench

    lib = load(args.lib)
    dev = torch.device('cuda')
    props = torch.cuda.get_device_properties(dev)
    parts = lib.fmla_num_sm_parts(props.multi_processor_count, 1)
    meta_ints = lib.fmla_sched_meta_ints()
    scale = 1.0 / math.sqrt(DK)
    rows = []
    torch.manual_seed(20261205)
    batches = [(name, [kv] * b) for name in filter(None, args.shapes.split(',')) for b, kv in [parse_shape(name)]]
    for spec in args.inputs:
        name, sep, path = spec.partition('=')
        if not sep or not name or not path:
            sys.exit(f'bench.py: --inputs {spec!r} is not NAME=FILE')
        batches.append((name, mlacheck_lengths(path)))
    if not batches:
        sys.exit('bench.py: no shape and no --inputs: nothing to time')
    for name, lengths in batches:
        b, kv = len(lengths), max(lengths)
        # Each request its own pages of 64 (none for an empty one), all of them in a random order;
        # a table row's slots past its pages hold page 0, never read.
        counts = [(n + PAGE - 1) // PAGE for n in lengths]
        pages = max(max(counts), 1)
        total_pages = max(sum(counts), 1)
        q = (torch.randn(b, 1, HEADS, DK, device=dev) * 0.02).to(torch.bfloat16)
        cache = (torch.randn(total_pages, PAGE, 1, DK, device=dev) * 0.02).to(torch.bfloat16)
        order = torch.randperm(total_pages, dtype=torch.int32)
        table = torch.zeros(b, pages, dtype=torch.int32)
        at = 0
        for r, c in enumerate(counts):
            table[r, :c] = order[at:at + c]
            at += c
        table = table.to(dev)
        seqlens = torch.tensor(lengths, device=dev, dtype=torch.int32)
        meta = torch.empty(parts, meta_ints, device=dev, dtype=torch.int32)
        splits = torch.empty(b + 1, device=dev, dtype=torch.int32)
        lse_acc = torch.empty(b + parts, HEADS, device=dev, dtype=torch.float32)
        o_acc = torch.empty(b + parts, HEADS, DV, device=dev, dtype=torch.float32)
        out = torch.full((b, 1, HEADS, DV), float('nan'), device=dev, dtype=torch.bfloat16)
        lse = torch.empty(b, HEADS, device=dev, dtype=torch.float32)

        def check(rc, what):
            if rc != 0:
                raise RuntimeError(f'{name}: {what} returned CUDA error {rc}')

        t0 = time.time()
        check(lib.fmla_plan(b, 1, seqlens.data_ptr(), meta.data_ptr(), splits.data_ptr(), parts,
                            torch.cuda.current_stream().cuda_stream), 'fmla_plan')
        torch.cuda.synchronize()
        plan_ms = (time.time() - t0) * 1e3

        def run():
            check(lib.fmla_decode(b, 1, q.data_ptr(), cache.data_ptr(), b * pages, table.data_ptr(), pages,
                                  seqlens.data_ptr(), scale, meta.data_ptr(), splits.data_ptr(), parts,
                                  lse_acc.data_ptr(), o_acc.data_ptr(), out.data_ptr(), lse.data_ptr(),
                                  torch.cuda.current_stream().cuda_stream), 'fmla_decode')

        run()
        torch.cuda.synchronize()
        # The float32 reference (keys gathered through the page table): uniform batches 16 requests
        # at a time, others one by one; an empty request's output must be zero.
        err2, ref2, empty_ok = 0.0, 0.0, True
        step = 16 if len(set(lengths)) == 1 else 1
        for r0 in range(0, b, step):
            r1 = min(b, r0 + step)
            n = lengths[r0]
            if n == 0:
                empty_ok = empty_ok and bool((out[r0:r1, 0].float() == 0).all().item())
                continue
            k = cache[table[r0:r1].long()].float().reshape(r1 - r0, pages * PAGE, DK)[:, :n]
            s = torch.einsum('bhd,bkd->bhk', q[r0:r1, 0].float(), k) * scale
            want = torch.einsum('bhk,bkd->bhd', torch.softmax(s, dim=-1), k[..., :DV])
            err2 += (out[r0:r1, 0].float() - want).pow(2).sum().item()
            ref2 += want.pow(2).sum().item()
        rel = math.sqrt(err2 / ref2) if ref2 > 0 else (0.0 if err2 == 0 else math.inf)
        us_eager = do_bench(run, warmup=args.warmup_ms, rep=args.rep_ms, return_mode='median') * 1e3
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            run()
        torch.cuda.synchronize()
        us_graph = do_bench(g.replay, warmup=args.warmup_ms, rep=args.rep_ms, return_mode='median') * 1e3
        nbytes = sum(lengths) * DK * 2 + b * HEADS * (DK + DV) * 2
        row = {'shape': name, 'batch': b, 'kv_len': kv, 'total_kv': sum(lengths), 'page_size': PAGE,
               'num_sm_parts': parts, 'rel_fro': rel, 'empty_rows_zero': empty_ok,
               'ok': rel <= REL_LIMIT and empty_ok, 'plan_ms': plan_ms, 'us_eager': us_eager,
               'us_graph': us_graph, 'gbps_graph': nbytes / (us_graph * 1e3)}
        rows.append(row)
        print(f'{name:14} rel {rel:.2e} {"ok" if row["ok"] else "WRONG"}  eager {us_eager:7.1f} us  '
              f'graph {us_graph:7.1f} us  {row["gbps_graph"]:6.0f} GB/s', flush=True)
        del q, cache, table, o_acc, g
        torch.cuda.empty_cache()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'fmla-results.jsonl'), 'w') as f:
        for r in rows:
            f.write(json.dumps(r) + '\n')
    with open(os.path.join(args.out, 'fmla-report.md'), 'w') as f:
        f.write(f'# FlashMLA dense bf16 decode ({props.name}, {props.multi_processor_count} SMs, '
                f'torch {torch.__version__})\n\n16 heads, q_len 1, pages of 64 in a random order, '
                f'scale 1/sqrt(576); triton do_bench median, L2 cleared before each repetition, µs.\n\n'
                '| shape | rel (fp32 ref) | eager us | graph us | GB/s graph |\n|---|---:|---:|---:|---:|\n')
        for r in rows:
            f.write(f"| {r['shape']} | {r['rel_fro']:.2e} | {r['us_eager']:.1f} | {r['us_graph']:.1f} | "
                    f"{r['gbps_graph']:.0f} |\n")
    wrong = [r['shape'] for r in rows if not r['ok']]
    if wrong:
        print(f'bench.py: output off the float32 reference (rel > {REL_LIMIT}) on {wrong}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
