#!/usr/bin/env python3
"""The competition submissions' own decode functions (../shared/seeds), run on the GPU machine where
they can run (their Triton paths; aiter, AMD's library, is not there) and timed for a same-run
comparison with `mlacheck bench` (issue 10's "best other" fp8 kernels; README.md beside this file).

Each seed file is a submission as the competition received it: its first line `submission N`, then
the Python module that defines `custom_kernel(data)`. It is imported with stand-ins for what the
competition's harness provided: `task` (input_t, output_t), `utils` (make_match_reference, never
called by custom_kernel) and every `aiter` module (its dtypes are torch's; anything else raises
AiterUnavailable when called, so a path of the seed that needs aiter is reported as such, never
silently replaced). A submission stored as a whole-file diff gives its two sides (`:before`,
`:after`); what does not import is reported and skipped.

Per shape (the harness shapes, q_len 1) the competition's inputs are built as its harness built them
(NUMERICS.md §4, §5 and §6.3: q and kv randn x 0.02 in bf16, the cache's fp8 copy by the per-tensor
quantization with a bf16 scale, its MXFP4 copy by aiter's block quantization as of 2026-03 with the
scale bytes AMD stores). The output is checked against float32 attention on the values of the cache
format the call read (relative Frobenius error: what remains is the kernel's own rounding of Q and
P), the output of its graph replay too, then an eager call and a CUDA-graph replay are timed with
triton.testing.do_bench (median, L2 cleared before each repetition).

usage: bench.py --seed FILE [--seed FILE ...] [--shapes bs4_kv1024,...] [--out DIR]
"""
import argparse
import importlib
import importlib.abc
import importlib.machinery
import json
import math
import os
import re
import sys
import types

HEADS, DK, DV = 16, 576, 512
SHAPES = ['bs4_kv1024', 'bs4_kv8192', 'bs32_kv1024', 'bs32_kv8192', 'bs64_kv1024', 'bs64_kv8192',
          'bs256_kv1024', 'bs256_kv8192']
# Against float32 attention on the values of the cache format read: an fp8 Q and a rounded P cost a
# few per cent (seeds 002 and 004 were 2.6-2.7e-2 off the bf16 cache's attention, their fp8 cache's
# error included: device call 19 of 2026-12-07's twenty-ninth session); a wrong path (wrong rows, scale, split, packing) is off by order 1. A kernel reading the
# MXFP4 cache may quantize Q to E2M1 too (one mantissa bit), so its limit is wider, still far below
# order 1 (not yet measured: the MXFP4 copy has not run on a GPU).
REL_LIMIT = {'bf16': 0.1, 'fp8': 0.1, 'mxfp4': 0.3}
E4M3_MAX = 448.0
SUBMISSION_LINE = re.compile(r'^submission \d+\s*$')


class AiterUnavailable(RuntimeError):
    pass


# The aiter submodules the seeds import (`from aiter import dtypes`, `from aiter.ops.quant import ...`):
# an attribute of these names is the stand-in submodule, not a callable.
AITER_SUBMODULES = {'dtypes', 'mla', 'ops', 'quant', 'jit', 'module_quant', 'utility', 'fp4_utils'}


class AiterStandIn(types.ModuleType):
    """Any aiter module: dtypes as torch's, submodules as stand-ins, any other name a callable that
    raises when called."""

    def __init__(self, name, torch):
        super().__init__(name)
        self.__path__ = []
        self._torch = torch

    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        dtypes = {'fp8': self._torch.float8_e4m3fn, 'bf16': self._torch.bfloat16, 'fp32': self._torch.float32,
                  'fp16': self._torch.float16, 'i32': self._torch.int32, 'u8': self._torch.uint8}
        if self.__name__ == 'aiter.dtypes' and attr in dtypes:
            return dtypes[attr]
        if attr in AITER_SUBMODULES:
            return importlib.import_module(f'{self.__name__}.{attr}')
        qualified = f'{self.__name__}.{attr}'

        def unavailable(*args, **kwargs):
            raise AiterUnavailable(f'{qualified} is aiter (AMD) code, not on this machine')

        return unavailable


class AiterFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, torch):
        self.torch = torch

    def find_spec(self, fullname, path, target=None):
        if fullname == 'aiter' or fullname.startswith('aiter.'):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return AiterStandIn(spec.name, self.torch)

    def exec_module(self, module):
        pass


def install_stand_ins(torch):
    sys.meta_path.insert(0, AiterFinder(torch))
    task = types.ModuleType('task')
    task.input_t = task.output_t = object
    sys.modules['task'] = task
    utils = types.ModuleType('utils')

    def make_match_reference(*args, **kwargs):
        raise RuntimeError("the harness's utils.make_match_reference: not part of a timed call")

    utils.make_match_reference = make_match_reference
    sys.modules['utils'] = utils


def seed_sources(path):
    """[(label, Python source)] of a seed file: the module after the `submission N` line; a
    submission stored as a whole-file diff (every line "- ", "+ " or "  " before its text) gives its
    two sides, labelled `before` and `after`."""
    with open(path) as f:
        lines = f.read().split('\n')
    if lines and SUBMISSION_LINE.match(lines[0]):
        lines = lines[1:]
    body = [line for line in lines if line.strip()]
    if body and all(line[:2] in ('- ', '+ ', '  ') or line in ('-', '+') for line in body):
        side = {'before': [], 'after': []}
        for line in lines:
            mark, text = line[:1], line[2:]
            if mark != '+':
                side['before'].append(text)
            if mark != '-':
                side['after'].append(text)
        return [(label, '\n'.join(text)) for label, text in side.items()]
    return [('', '\n'.join(lines))]


def load_seed(name, source):
    """The seed's module, or (None, why) when it does not import or has no custom_kernel."""
    module_name = 'seed_' + re.sub(r'[^0-9A-Za-z]', '_', name)
    # Triton reads a kernel's source through inspect (the code's file): the module is compiled as a
    # file that holds exactly its source, written before it runs.
    src_path = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'{module_name}.py')
    try:
        code = compile(source, src_path, 'exec')
    except SyntaxError as e:
        return None, f'not a Python module ({e.msg}, line {e.lineno})'
    with open(src_path, 'w') as f:
        f.write(source)
    module = types.ModuleType(module_name)
    module.__file__ = src_path
    sys.modules[module_name] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:  # its imports or module-level code: reported, the seed skipped
        return None, f'import failed: {type(e).__name__}: {str(e)[:300]}'
    if not callable(getattr(module, 'custom_kernel', None)):
        return None, 'no custom_kernel'
    return module, ''


class KvRecord(dict):
    """kv_data that records which of its formats a call read (bf16, fp8, mxfp4): the format a row counts for."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)


def steady_call(custom_kernel, data, kv_data):
    """One call of a submission after a first, untimed one, and the cache formats the second read.
    The first call may do once-only work that touches other formats (seed 001's first call warms
    aiter's fp8 path, which raises here and is swallowed by its own try, then runs its MXFP4 path):
    the formats of the calls that are timed are the row's, not the warm-up's."""
    custom_kernel(data)
    kv_data.read.clear()
    out = custom_kernel(data)
    return out, sorted(kv_data.read)


def parse_shape(name):
    try:
        b, kv = name.split('_')
        return int(b.removeprefix('bs')), int(kv.removeprefix('kv'))
    except ValueError:
        sys.exit(f'bench.py: shape {name!r} is not bs<B>_kv<L>')


def quantize_fp8(torch, x):
    """NUMERICS.md §4: the harness's per-tensor quantization (bf16 scale amax / 448)."""
    amax = x.abs().amax().clamp(min=1e-12)
    scale = amax / E4M3_MAX
    codes = (x / scale).clamp(min=-E4M3_MAX, max=E4M3_MAX).to(torch.float8_e4m3fn)
    return codes, scale.to(torch.float32).reshape(1)


# NUMERICS.md §5.3: the E2M1 magnitudes by code 0-7 (bit 3 the sign).
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
MXFP4_BLOCK = 32


def quantize_mxfp4(torch, x):
    """NUMERICS.md §5: the harness's MXFP4 copy (aiter's dynamic_mxfp4_quant, the rule of e6af9a487dc4
    and later, the scale byte e + 127 as on AMD), for finite inputs. Returns the packed codes viewed
    as float4_e2m1fn_x2 (M, 1, 288), the block scales viewed as float8_e8m0fnu (M, 18), and the
    dequantized values (M, 576) float32 for the reference."""
    rows = x.shape[0]
    blocks = x.float().reshape(rows, DK // MXFP4_BLOCK, MXFP4_BLOCK)
    amax = blocks.abs().amax(dim=-1)
    # §5.2: amax rounded up to a power of two at the "0.75" point, then e = log2 - 2, clamped.
    rounded = ((amax.view(torch.int32) + 0x200000) & -0x800000).view(torch.float32)
    e = (torch.floor(torch.log2(rounded)) - 2).clamp(-127, 127)
    qx = blocks * torch.exp2(-e)[..., None]
    a = qx.abs()
    bits = a.view(torch.int32)
    # §5.3, a < 1: add 2^22 (spacing 0.5, ties to even) and take the bits above 2^22's.
    below_one = (a + 4194304.0).view(torch.int32) - 0x4A800000
    # 1 <= a < 6: the mantissa rounded to one bit (ties to even) with the exponent rebiased.
    one_to_six = ((bits - (126 << 23) + 0x1FFFFF + ((bits >> 22) & 1)) >> 22) & 0xFF
    magnitude = torch.where(a >= 6.0, torch.full_like(bits, 7), torch.where(a < 1.0, below_one, one_to_six))
    codes = (magnitude | ((qx.view(torch.int32) < 0).to(torch.int32) << 3)).to(torch.uint8).reshape(rows, DK)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)  # §5.5: the low nibble is the even element
    scale_bytes = (e + 127).to(torch.uint8)
    table = torch.tensor(E2M1_VALUES, device=x.device)
    values = (table[codes.long()].reshape(rows, DK // MXFP4_BLOCK, MXFP4_BLOCK) *
              torch.exp2(e)[..., None]).reshape(rows, DK)
    return (packed.contiguous().view(torch.float4_e2m1fn_x2).reshape(rows, 1, DK // 2),
            scale_bytes.contiguous().view(torch.float8_e8m0fnu), values)


def attention(torch, q, keys, b, kv_len):
    """float32 attention of each request's q on its keys (M, 576) float32, 16 requests at a time."""
    want = torch.empty(b, HEADS, DV, device=q.device)
    for r0 in range(0, b, 16):
        k = keys.view(b, kv_len, DK)[r0:r0 + 16]
        s = torch.einsum('bhd,bkd->bhk', q[r0:r0 + 16].float(), k) / math.sqrt(DK)
        want[r0:r0 + 16] = torch.einsum('bhk,bkd->bhd', torch.softmax(s, dim=-1), k[..., :DV])
    return want


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', action='append', required=True, metavar='FILE')
    ap.add_argument('--shapes', default=','.join(SHAPES))
    ap.add_argument('--out', default=os.environ.get('OUT', '.'))
    ap.add_argument('--warmup-ms', type=int, default=25)
    ap.add_argument('--rep-ms', type=int, default=100)
    args = ap.parse_args()
    import torch
    from triton.testing import do_bench

    install_stand_ins(torch)
    # Rows are written as they are measured, so that a run stopped by a time limit keeps what it timed.
    os.makedirs(args.out, exist_ok=True)
    results_file = open(os.path.join(args.out, 'seed-results.jsonl'), 'w')
    dev = torch.device('cuda')
    props = torch.cuda.get_device_properties(dev)
    seeds = []
    for path in args.seed:
        try:
            sources = seed_sources(path)
        except OSError as e:
            sys.exit(f'bench.py: {e}')
        for label, source in sources:
            name = os.path.basename(path) + (f':{label}' if label else '')
            module, why = load_seed(name, source)
            print(f'{name}: ' + ('loaded' if module else f'skipped: {why}'), flush=True)
            seeds.append((name, module, why))
    rows = []
    torch.manual_seed(20261207)
    for shape in filter(None, args.shapes.split(',')):
        b, kv_len = parse_shape(shape)
        q = (torch.randn(b, HEADS, DK, device=dev, dtype=torch.bfloat16) * 0.02).to(torch.bfloat16)
        kv = (torch.randn(b * kv_len, 1, DK, device=dev, dtype=torch.bfloat16) * 0.02).to(torch.bfloat16)
        kv8, scale = quantize_fp8(torch, kv)
        qo_indptr = torch.arange(b + 1, device=dev, dtype=torch.int32)
        kv_indptr = torch.arange(b + 1, device=dev, dtype=torch.int32) * kv_len
        config = {'batch_size': b, 'kv_seq_len': kv_len, 'q_seq_len': 1, 'num_heads': HEADS, 'num_kv_heads': 1,
                  'qk_head_dim': DK, 'v_head_dim': DV, 'kv_lora_rank': DV, 'qk_rope_head_dim': DK - DV,
                  'sm_scale': 1.0 / math.sqrt(DK)}
        fp4, fp4_scales, fp4_values = quantize_mxfp4(torch, kv.reshape(b * kv_len, DK))
        kv_data = KvRecord({'bf16': kv, 'fp8': (kv8, scale), 'mxfp4': (fp4, fp4_scales)})
        data = (q, kv_data, qo_indptr, kv_indptr, config)
        # The reference of each cache format on that format's values (a call that read one format is
        # judged against it; one that read several against the bf16 cache's), made when first needed.
        keys_of = {'bf16': lambda: kv.float().reshape(b * kv_len, DK),
                   'fp8': lambda: kv8.float().reshape(b * kv_len, DK) * scale,
                   'mxfp4': lambda: fp4_values}
        references = {}

        def reference(read):
            fmt = read[0] if len(read) == 1 else 'bf16'
            if fmt not in references:
                references[fmt] = attention(torch, q, keys_of[fmt](), b, kv_len)
            return references[fmt]
        nbytes_fp8 = b * kv_len * DK + b * HEADS * (DK + DV) * 2
        for name, module, why in seeds:
            row = {'seed': name, 'shape': shape, 'batch': b, 'kv_len': kv_len, 'total_kv': b * kv_len}
            if module is None:
                row.update(ok=False, skipped=why)
                rows.append(row)
                results_file.write(json.dumps(row) + '\n')
                continue
            try:
                # The cache formats this shape's timed path read: it counts as a kernel of that format.
                out, row['kv_read'] = steady_call(module.custom_kernel, data, kv_data)
                torch.cuda.synchronize()
                out = out.view(b, HEADS, DV)
                read = row['kv_read'] or ['bf16']
                want = reference(read)
                limit = REL_LIMIT[read[0] if len(read) == 1 else 'bf16']
                rel = ((out.float() - want).norm() / want.norm()).item()
                row['rel_fro'] = rel
                row['ok'] = math.isfinite(rel) and rel <= limit
                if row['ok']:
                    run = lambda: module.custom_kernel(data)  # noqa: E731
                    row['us_eager'] = do_bench(run, warmup=args.warmup_ms, rep=args.rep_ms, return_mode='median') * 1e3
                    try:
                        g = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(g):
                            captured = module.custom_kernel(data)
                        # The replay's own output is what is checked. Poisoned inside inference mode: a
                        # submission whose custom_kernel runs under @torch.inference_mode() (004) returns
                        # an inference tensor, which refuses an in-place write outside it.
                        with torch.inference_mode():
                            captured.fill_(float('nan'))
                        g.replay()
                        torch.cuda.synchronize()
                        grel = ((captured.view(b, HEADS, DV).float() - want).norm() / want.norm()).item()
                        row['graph_ok'] = math.isfinite(grel) and grel <= limit
                        if row['graph_ok']:
                            row['us_graph'] = do_bench(g.replay, warmup=args.warmup_ms, rep=args.rep_ms,
                                                       return_mode='median') * 1e3
                            row['gbps_graph_fp8_bytes'] = nbytes_fp8 / (row['us_graph'] * 1e3)
                        del g
                    except Exception as e:  # a host sync or allocation inside the call: no graph
                        row['graph_error'] = f'{type(e).__name__}: {str(e)[:200]}'
            except AiterUnavailable as e:
                row.update(ok=False, skipped=f'its path for this shape needs aiter: {e}')
            except Exception as e:
                row.update(ok=False, error=f'{type(e).__name__}: {str(e)[:300]}')
            print(f"{shape:13} {name:30} " + (
                f"kv {'+'.join(row['kv_read'])} " if row.get('kv_read') else '') + (
                f"rel {row['rel_fro']:.2e} " if 'rel_fro' in row else '') + (
                f"eager {row['us_eager']:7.1f} us " if 'us_eager' in row else '') + (
                f"graph {row['us_graph']:7.1f} us" if 'us_graph' in row else
                row.get('graph_error', row.get('skipped', row.get('error', '' if row.get('ok') else 'WRONG')))),
                flush=True)
            rows.append(row)
            results_file.write(json.dumps(row) + '\n')
            results_file.flush()
        del q, kv, kv8, fp4, fp4_scales, fp4_values, references, data
        torch.cuda.empty_cache()
    results_file.close()
    with open(os.path.join(args.out, 'seed-report.md'), 'w') as f:
        f.write(f'# The competition submissions on {props.name} ({props.multi_processor_count} SMs, torch '
                f'{torch.__version__})\n\nTheir Triton paths (aiter is AMD\'s: a path needing it is not run); '
                'inputs as the harness built them; rel against float32 attention on the values of the cache '
                'format the call read; triton do_bench median, L2 cleared before each repetition, µs.\n\n'
                '| shape | seed | cache read | rel | eager us | graph us | note |\n|---|---|---|---:|---:|---:|---|\n')
        for r in rows:
            note = r.get('skipped') or r.get('error') or r.get('graph_error') or ('' if r.get('ok') else 'WRONG')
            f.write(f"| {r['shape']} | {r['seed']} | {'+'.join(r.get('kv_read', [])) or '-'} | "
                    f"{r.get('rel_fro', float('nan')):.2e} | "
                    f"{r.get('us_eager', float('nan')):.1f} | {r.get('us_graph', float('nan')):.1f} | {note[:120]} |\n")
    wrong = [f"{r['shape']} {r['seed']}" for r in rows if 'rel_fro' in r and not r['ok']]
    if wrong:
        print(f'bench.py: output off the float32 reference (rel over {REL_LIMIT}) on {wrong}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
