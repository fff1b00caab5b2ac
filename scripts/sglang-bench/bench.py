#!/usr/bin/env python3
"""sglang's Triton MLA decode (sglang/kernels/ops/attention/decode_attention.py), timed on the GPU
machine for a same-run comparison with `mlacheck bench` (issue 10: the fp8 kernels faster than every
other kernel of the format on every row; README.md beside this file).

Per shape (the harness shapes of `mlacheck bench`, q_len 1) and KV format (bf16; fp8 e4m3 with a
per-tensor scale): q and the cache random (randn x 0.02, bf16), the key rows contiguous; for each
split count and with and without programmatic dependent launch, the output checked against a
float32 reference on the kernel's own operands, then the CUDA-graph replay timed by
triton.testing.do_bench (median, L2 cleared before each repetition); the fastest configuration timed
again, eager and graph, with longer runs.

usage: bench.py --src DIR [--shapes bs4_kv1024,...] [--formats bf16,fp8] [--splits 1,2,...] [--out DIR]
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import types

HEADS, DK, DV = 16, 576, 512
SHAPES = ['bs4_kv1024', 'bs4_kv8192', 'bs32_kv1024', 'bs32_kv8192', 'bs64_kv1024', 'bs64_kv8192',
          'bs256_kv1024', 'bs256_kv8192']
FORMATS = ['bf16', 'fp8']
# The largest e4m3 magnitude: the per-tensor scale maps the cache's amax onto it.
E4M3_MAX = 448.0
# Relative Frobenius error against the float32 reference on the kernel's operands: bf16 rounding of
# P and the output stays far below the first; the fp8 kernel also rounds P to e4m3 (3 mantissa bits)
# before P·V. A mis-called kernel (wrong strides, scale, splits) is off by order 1.
REL_LIMIT = {'bf16': 1e-2, 'fp8': 5e-2}
SGLANG_DEFAULT_SPLITS = 8  # sglang's --triton-attention-num-kv-splits default


def parse_shape(name):
    try:
        b, kv = name.split('_')
        return int(b.removeprefix('bs')), int(kv.removeprefix('kv'))
    except ValueError:
        sys.exit(f'bench.py: shape {name!r} is not bs<B>_kv<L>')


def load_sglang(src, torch):
    """The kernel's two files, imported under their own module names. The runtime modules they
    import are stood in for: sglang.srt.utils (is_hip and the AMD probes answer False on an NVIDIA
    GPU; the core count is the device's) and sglang.srt.environ (read on AMD paths only, so a read
    raises instead of answering a default)."""
    if torch.version.hip is not None:
        sys.exit('bench.py: an AMD GPU: the stand-ins below answer for NVIDIA only')
    for name in ['sglang', 'sglang.srt', 'sglang.kernels', 'sglang.kernels.ops', 'sglang.kernels.ops.attention']:
        package = types.ModuleType(name)
        package.__path__ = []
        sys.modules[name] = package
    utils = types.ModuleType('sglang.srt.utils')
    utils.is_hip = lambda: False
    utils.is_gfx95_supported = lambda: False
    utils.is_gfx1250_supported = lambda: False
    utils.get_device_core_count = lambda index=0: torch.cuda.get_device_properties(index).multi_processor_count
    sys.modules['sglang.srt.utils'] = utils

    class Unread:
        def __getattr__(self, name):
            raise RuntimeError(f'bench.py: sglang read envs.{name}, which its NVIDIA path does not: '
                               'the stand-in has no value for it')

    environ = types.ModuleType('sglang.srt.environ')
    environ.envs = Unread()
    sys.modules['sglang.srt.environ'] = environ
    modules = {}
    for short in ['score_mod', 'decode_attention']:
        name = f'sglang.kernels.ops.attention.{short}'
        path = os.path.join(src, f'{short}.py')
        if not os.path.isfile(path):
            sys.exit(f'bench.py: {path} missing (build.sh makes it)')
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules[short] = module
    return modules['decode_attention']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--src', required=True, help="the folder of build.sh's decode_attention.py and score_mod.py")
    ap.add_argument('--shapes', default=','.join(SHAPES), help='uniform shapes bs<B>_kv<L>')
    ap.add_argument('--formats', default=','.join(FORMATS), help='bf16 and/or fp8')
    ap.add_argument('--splits', default='1,2,4,8,16,32,64', help='split counts to sweep')
    ap.add_argument('--out', default=os.environ.get('OUT', '.'))
    args = ap.parse_args()
    formats = [f for f in args.formats.split(',') if f]
    if not formats or any(f not in FORMATS for f in formats):
        sys.exit(f'bench.py: --formats {args.formats!r}: each of {FORMATS}')
    try:
        split_counts = sorted({int(s) for s in args.splits.split(',') if s})
    except ValueError:
        sys.exit(f'bench.py: --splits {args.splits!r} is not a list of integers')
    if not split_counts or split_counts[0] < 1:
        sys.exit('bench.py: --splits needs counts >= 1')
    import torch
    from triton.testing import do_bench

    da = load_sglang(args.src, torch)
    # Rows are written as they are measured, so that a run stopped by a time limit keeps what it timed.
    os.makedirs(args.out, exist_ok=True)
    results_file = open(os.path.join(args.out, 'sgl-results.jsonl'), 'w')
    dev = torch.device('cuda')
    props = torch.cuda.get_device_properties(dev)
    sm_scale = 1.0 / math.sqrt(DK)
    torch.manual_seed(20261207)
    rows, best_rows, wrong = [], [], []
    for shape in filter(None, args.shapes.split(',')):
        b, kv_len = parse_shape(shape)
        n = b * kv_len
        q = (torch.randn(b, HEADS, DK, device=dev) * 0.02).to(torch.bfloat16)
        cache = (torch.randn(n, 1, DK, device=dev) * 0.02).to(torch.bfloat16)
        kv_indptr = (torch.arange(b + 1, device=dev, dtype=torch.int32) * kv_len).to(torch.int32)
        kv_indices = torch.arange(n, device=dev, dtype=torch.int32)
        for fmt in formats:
            if fmt == 'fp8':
                scale = cache.float().abs().max().item() / E4M3_MAX
                k_buffer = (cache.float() / scale).to(torch.float8_e4m3fn)
                # The kernel's operands: Q cast to e4m3 by the kernel (q.to(K's type)), the codes x scale.
                q_ref = q.to(torch.float8_e4m3fn).float()
                kv_ref = k_buffer.float().view(b, kv_len, DK) * scale
            else:
                scale = 1.0
                k_buffer = cache
                q_ref = q.float()
                kv_ref = cache.float().view(b, kv_len, DK)
            v_buffer = k_buffer[..., :DV]
            # The float32 reference, 16 requests at a time.
            want = torch.empty(b, HEADS, DV, device=dev)
            for r0 in range(0, b, 16):
                k = kv_ref[r0:r0 + 16]
                s = torch.einsum('bhd,bkd->bhk', q_ref[r0:r0 + 16], k) * sm_scale
                want[r0:r0 + 16] = torch.einsum('bhk,bkd->bhd', torch.softmax(s, dim=-1), k[..., :DV])
            kv_bytes = n * DK * k_buffer.element_size()
            nbytes = kv_bytes + b * HEADS * (DK + DV) * 2
            results = []
            for splits in split_counts:
                if (splits - 1) * da._MIN_BLOCK_KV >= kv_len:  # sglang's least split length: empty programs
                    continue
                for pdl in (False, True):
                    out = torch.full((b, HEADS, DV), float('nan'), device=dev, dtype=torch.bfloat16)
                    logits = torch.empty(b, HEADS, splits, DV, device=dev, dtype=torch.float32)
                    lse = torch.empty(b, HEADS, splits, device=dev, dtype=torch.float32)
                    counts = torch.full((b,), splits, device=dev, dtype=torch.int32)

                    # Bound now, not at the call (a closure would see the loop's later tensors); the
                    # tensors stay referenced by the row while its graph may replay, since a captured
                    # graph holds their addresses, not the tensors (released ones were reused by later
                    # configurations and a re-timing replayed into them: device call 19 of 2026-12-07's twenty-ninth session).
                    def run(out=out, logits=logits, lse=lse, counts=counts, splits=splits, pdl=pdl):
                        da.decode_attention_fwd(q, k_buffer, v_buffer, out, kv_indptr, kv_indices, logits, lse,
                                                counts, splits, sm_scale, scale, scale, has_mla=True,
                                                use_pdl=pdl, page_size=1)

                    row = {'shape': shape, 'format': fmt, 'batch': b, 'kv_len': kv_len, 'splits': splits,
                           'pdl': pdl}
                    try:
                        run()
                        torch.cuda.synchronize()
                        rel = ((out.float() - want).norm() / want.norm()).item()
                        row['rel_fro'] = rel
                        row['ok'] = math.isfinite(rel) and rel <= REL_LIMIT[fmt]
                        if row['ok']:
                            g = torch.cuda.CUDAGraph()
                            with torch.cuda.graph(g):
                                run()
                            # The replay's own output, checked as the eager one was.
                            out.fill_(float('nan'))
                            g.replay()
                            torch.cuda.synchronize()
                            graph_rel = ((out.float() - want).norm() / want.norm()).item()
                            row['graph_rel_fro'] = graph_rel
                            row['graph_ok'] = math.isfinite(graph_rel) and graph_rel <= REL_LIMIT[fmt]
                            if row['graph_ok']:
                                row['us_graph'] = do_bench(g.replay, warmup=10, rep=40, return_mode='median') * 1e3
                                row['graph'] = g
                                row['run'] = run
                                row['tensors'] = (out, logits, lse, counts)
                            else:
                                wrong.append(f'{shape} {fmt} splits={splits} pdl={pdl}: graph replay rel {graph_rel:.3g}')
                        else:
                            wrong.append(f'{shape} {fmt} splits={splits} pdl={pdl}: rel {rel:.3g}')
                    except Exception as e:  # a configuration the kernel or this Triton refuses: reported, not timed
                        row['ok'] = False
                        row['error'] = f'{type(e).__name__}: {str(e)[:300]}'
                    print(f"{shape:13} {fmt:4} splits {splits:3} pdl {int(pdl)}  "
                          + (f"rel {row['rel_fro']:.2e} " if 'rel_fro' in row else '')
                          + (f"graph {row['us_graph']:8.1f} us" if 'us_graph' in row else row.get('error', 'WRONG')),
                          flush=True)
                    results.append(row)
            timed = [r for r in results if 'us_graph' in r]
            if timed:
                best = min(timed, key=lambda r: r['us_graph'])
                # The fastest configuration again, longer: its graph replay and an eager call.
                best['us_graph_best'] = do_bench(best['graph'].replay, warmup=25, rep=100, return_mode='median') * 1e3
                best['us_eager_best'] = do_bench(best['run'], warmup=25, rep=100, return_mode='median') * 1e3
                best['gbps_graph'] = nbytes / (best['us_graph_best'] * 1e3)
                default = [r for r in timed if r['splits'] == SGLANG_DEFAULT_SPLITS and not r['pdl']]
                best_rows.append({'shape': shape, 'format': fmt, 'splits': best['splits'], 'pdl': best['pdl'],
                                  'rel_fro': best['rel_fro'], 'us_graph': best['us_graph_best'],
                                  'us_eager': best['us_eager_best'], 'gbps_graph': best['gbps_graph'],
                                  'us_graph_8_splits': default[0]['us_graph'] if default else None})
                print(f"{shape:13} {fmt:4} best: splits {best['splits']} pdl {int(best['pdl'])}  graph "
                      f"{best['us_graph_best']:.1f} us  eager {best['us_eager_best']:.1f} us", flush=True)
            for r in results:
                r.pop('graph', None)
                r.pop('run', None)
                r.pop('tensors', None)
                rows.append(r)
                results_file.write(json.dumps(r) + '\n')
            results_file.flush()
            del v_buffer, k_buffer, kv_ref, want
            torch.cuda.empty_cache()
        del q, cache
        torch.cuda.empty_cache()
    results_file.close()
    version_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sglang.version')
    version = open(version_file).read().strip() if os.path.isfile(version_file) else '?'
    with open(os.path.join(args.out, 'sgl-report.md'), 'w') as f:
        f.write(f'# sglang Triton MLA decode ({props.name}, {props.multi_processor_count} SMs, torch '
                f'{torch.__version__}, {version})\n\n16 heads, q_len 1, contiguous key rows, scale 1/sqrt(576); '
                'fp8: e4m3 cache with a per-tensor scale, Q cast to e4m3 by the kernel; the fastest of '
                f'splits {split_counts} with and without PDL; triton do_bench median, L2 cleared before '
                'each repetition, µs.\n\n'
                '| shape | format | splits | PDL | rel (fp32 ref) | graph us | eager us | GB/s graph | graph us, 8 splits, no PDL |\n'
                '|---|---|---:|---|---:|---:|---:|---:|---:|\n')
        for r in best_rows:
            eight = f"{r['us_graph_8_splits']:.1f}" if r['us_graph_8_splits'] is not None else '-'
            f.write(f"| {r['shape']} | {r['format']} | {r['splits']} | {'yes' if r['pdl'] else 'no'} | "
                    f"{r['rel_fro']:.2e} | {r['us_graph']:.1f} | {r['us_eager']:.1f} | {r['gbps_graph']:.0f} | {eight} |\n")
        if wrong:
            f.write('\nOff the reference (not timed): ' + '; '.join(wrong) + '\n')
    if wrong:
        print(f'bench.py: output off the float32 reference on {wrong}', file=sys.stderr)
        return 1
    if not best_rows:
        print('bench.py: no configuration ran', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
