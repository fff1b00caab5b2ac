#!/usr/bin/env python3
"""A timing probe, not part of mlacheck (docs/HOPPER.md, "fp8 and MXFP4 faster than every other
kernel"): the other kernels of the bars are timed by triton.testing.do_bench (the L2 cleared by
writing 256 MB before each repetition, CUDA events around one call), mlacheck's by `bench --graph`
(gpu/timing.hip: the L2 flushed by reading 256 MB, CUDA events around one graph replay). This times
the same graphs both ways on the GPU at hand: a graph of one tiny kernel (what a call costs before
its work) and a graph that reads a 4 x 1024 fp8 cache's bytes (2.4 MB) once.

usage: python3 docs/probes/timing_methods.py [--reps 200]       (on the GPU machine; a few seconds)
"""
import argparse

import torch
from triton.testing import do_bench


def mlacheck_way(graph, flush, reps):
    """gpu/timing.hip's loop: read the flush buffer, event, replay, event; the median."""
    sink = torch.empty((), device='cuda', dtype=flush.dtype)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(10):
        graph.replay()
    for i in range(reps):
        torch.sum(flush, dim=0, out=sink)
        starts[i].record()
        graph.replay()
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--reps', type=int, default=200)
    args = ap.parse_args()
    flush = torch.ones(256 << 18, device='cuda', dtype=torch.float32)  # 256 MB
    tiny = torch.ones(1, device='cuda')
    cache = torch.randint(0, 255, (4 * 1024 * 576,), device='cuda', dtype=torch.uint8)
    total = torch.empty((), device='cuda', dtype=torch.int64)
    graphs = {}
    for name, fn in (('one tiny kernel', lambda: tiny.add_(1.0)),
                     ('read 2.4 MB (a 4 x 1024 fp8 cache) once', lambda: torch.sum(cache, dim=0, out=total))):
        fn()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        graphs[name] = g
    print(f'{torch.cuda.get_device_name()}: graph replay, median, µs')
    print(f"{'graph':45} {'do_bench (256 MB written)':>26} {'bench --graph way (256 MB read)':>32}")
    for name, g in graphs.items():
        db = do_bench(g.replay, warmup=25, rep=100, return_mode='median') * 1e3
        ours = mlacheck_way(g, flush, args.reps)
        print(f'{name:45} {db:26.2f} {ours:32.2f}')


if __name__ == '__main__':
    main()
