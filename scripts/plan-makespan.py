#!/usr/bin/env python3
"""What the hopper family's balanced plan gives its busiest block, for a batch's lengths.

The plan (problem/split_plan.h, namespace balanced) lays the batch out on one cost axis: request b
costs `overhead` units and then T_b = ceil(L_b / 64) tile units; the axis is cut into `blocks` equal
shares of Q = max(ceil(total / blocks), overhead + 1) units, and a block runs the pieces of requests
whose tiles fall in its share (the equal cut). With fewer requests than blocks the plan takes the
one-piece cut instead where its piece size P (the `1/block` row below) is at most Q (namespace
balanced::one_piece); the last column of each overhead's row says which cut the plan takes, and the
row gives that cut's figures. This script reproduces those cuts (a model: nothing runs on a GPU)
and prints, for each plan overhead, the largest number of tiles a block gets, the largest number of
pieces, and the busiest block's tiles + r x pieces for a few per-piece costs r (in tiles), where a
piece's real fixed cost (Q staging, the epilogue) is what the plan's overhead stands for.

References beside the plan, in the same cost model: the best any cut of the batch in request
order into `blocks` contiguous ranges can do (`optimal`: a range costs its tiles + r x its pieces,
a request cut between two blocks a piece in each); the cut that gives every block one piece
(`1/block`: each request in ceil(T_b / P) pieces, P the least that needs at most `blocks` pieces;
only where the requests are fewer than the blocks); and, with --uniform KV_LEN:SPLITS, split-K on a
uniform batch of as many requests (each request cut into SPLITS ranges of ceil(KV_LEN / SPLITS)
keys, one block each, blocks beyond `blocks` in further waves): the comparison of issue 10's ragged
target ("within 10 % of the uniform case of the same byte count").

Usage: plan-makespan.py FILE.safetensors [--blocks 132] [--overheads 0,1,2,3,4,6] [--r 0.5,1,1.5,2,3]
                        [--uniform KV_LEN:SPLITS]
FILE: golden inputs from `mlacheck gen --inputs-only` (its kv_indptr), or `--lengths L,L,...`.
The safetensors header is read by hand (8-byte length, JSON, raw little-endian data): no numpy.
"""
import argparse
import json
import struct
import sys

TILE_KEYS = 64  # gpu/hopper/config.h kTileKeys, the plan's unit_keys


def kv_lengths(path):
    with open(path, 'rb') as f:
        header_len = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(header_len))
        entry = header.get('kv_indptr')
        if entry is None:
            sys.exit(f'{path}: no kv_indptr tensor')
        formats = {'I32': '<i', 'I64': '<q'}
        if entry['dtype'] not in formats:
            sys.exit(f"{path}: kv_indptr is {entry['dtype']}, expected I32 or I64")
        begin, end = entry['data_offsets']
        f.seek(8 + header_len + begin)
        raw = f.read(end - begin)
    size = struct.calcsize(formats[entry['dtype']])
    indptr = [struct.unpack_from(formats[entry['dtype']], raw, i * size)[0] for i in range(len(raw) // size)]
    return [indptr[i + 1] - indptr[i] for i in range(len(indptr) - 1)]


def blocks_of(units, overhead, blocks):
    """Tiles and pieces of each block under the balanced plan (split_plan.h's arithmetic), for the
    requests' tile counts `units`."""
    total = sum(units) + overhead * len(units)
    share = max((total + blocks - 1) // blocks, overhead + 1)
    tiles, pieces = [0] * blocks, [0] * blocks
    start = 0  # A_b: where request b's units start
    for t in units:
        start += overhead
        if t == 0:  # piece_block of an empty request
            block = (start - (overhead if overhead > 0 else 1)) // share if start > 0 else 0
            pieces[block] += 1
        else:
            first, last = start // share, (start + t - 1) // share
            for block in range(first, last + 1):
                lo, hi = max(start, block * share), min(start + t, (block + 1) * share)
                tiles[block] += hi - lo
                pieces[block] += 1
        start += t
    return tiles, pieces


def fits(units, r, budget, blocks):
    """Whether the batch, in order, fits `blocks` ranges of cost <= budget: each range filled as far as
    it goes (a later start within a request leaves less of it and the same piece cost, so filling
    greedily is never worse than any other cut)."""
    used, room = 0, 0.0
    for left in units:
        first = True
        while first or left > 0:  # the request's pieces (an empty request: one, of cost r)
            need = r + (1 if left > 0 else 0)  # a piece's cost and at least one of its tiles
            if room < need:  # the next range
                used += 1
                if used > blocks or budget < need:
                    return False
                room = budget
            take = min(left, int(room - r))
            room -= r + take
            left -= take
            first = False
    return True


def optimal_span(units, r, blocks):
    """The least budget a contiguous cut into `blocks` ranges needs (fits is monotone in it): found by
    bisection, to within 1e-9 of a tile."""
    lo, hi = 0.0, sum(units) + r * (len(units) + 1)
    if not fits(units, r, hi, blocks):
        return float('inf')
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        if fits(units, r, mid, blocks):
            hi = mid
        else:
            lo = mid
    return round(hi, 6)


def one_piece_tiles(units, blocks):
    """The least piece size P (tiles) such that cutting each request into ceil(T_b / P) pieces (an
    empty request: one) gives at most `blocks` pieces, so that every block runs one piece of at most
    P tiles, as split-K's blocks do; None where no P does (more requests than blocks)."""
    if len(units) > blocks:
        return None
    lo, hi = 1, max(units + [1])  # at hi every request is one piece
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(max(1, -(-t // mid)) for t in units) <= blocks:
            hi = mid
        else:
            lo = mid + 1
    return lo


def uniform_span(requests, kv_len, splits, r, blocks):
    """Split-K on a uniform batch: requests x splits blocks of ceil(ceil(kv_len / splits) / 64) tiles
    and one piece each, in waves of `blocks`."""
    tiles = (-(-kv_len // splits) + TILE_KEYS - 1) // TILE_KEYS
    waves = -(-(requests * splits) // blocks)
    return waves * (tiles + r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('file', nargs='?')
    ap.add_argument('--lengths', help='comma-separated key counts instead of a file')
    ap.add_argument('--blocks', type=int, default=132)
    ap.add_argument('--overheads', default='0,1,2,3,4,6')
    ap.add_argument('--r', default='0.5,1,1.5,2,3')
    ap.add_argument('--uniform', help='KV_LEN:SPLITS of the uniform batch of as many requests to compare with')
    args = ap.parse_args()
    if (args.file is None) == (args.lengths is None):
        ap.error('give FILE or --lengths')
    lengths = [int(x) for x in args.lengths.split(',')] if args.lengths else kv_lengths(args.file)
    if any(x < 0 for x in lengths) or args.blocks < 1:
        ap.error('lengths must be >= 0 and blocks >= 1')
    costs = [float(x) for x in args.r.split(',')]
    units = [(x + TILE_KEYS - 1) // TILE_KEYS for x in lengths]
    print(f'requests {len(lengths)}, tiles {sum(units)}, blocks {args.blocks}, '
          f'tiles a block if spread evenly {sum(units) / args.blocks:.2f}')
    print('overhead  max tiles  max pieces  ' + '  '.join(f'r={r:g}' for r in costs) + '  cut')
    one = one_piece_tiles(units, args.blocks)
    for overhead in (int(x) for x in args.overheads.split(',')):
        share = max((sum(units) + overhead * len(units) + args.blocks - 1) // args.blocks, overhead + 1)
        if one is not None and len(units) < args.blocks and one <= share:  # split_plan.h one_piece::taken
            print(f'{overhead:8d}  {one:9d}  {1:10d}  ' + '  '.join(f'{one + r:g}' for r in costs) + '  1/block')
            continue
        tiles, pieces = blocks_of(units, overhead, args.blocks)
        spans = [max(t + r * p for t, p in zip(tiles, pieces)) for r in costs]
        print(f'{overhead:8d}  {max(tiles):9d}  {max(pieces):10d}  ' + '  '.join(f'{s:g}' for s in spans) + '  equal')
    print(f'{"optimal":>8}  {"-":>9}  {"-":>10}  ' + '  '.join(f'{optimal_span(units, r, args.blocks):g}' for r in costs))
    if one is not None:
        print(f'{"1/block":>8}  {one:9d}  {1:10d}  ' + '  '.join(f'{one + r:g}' for r in costs))
    if args.uniform:
        try:
            kv_len, splits = (int(x) for x in args.uniform.split(':'))
        except ValueError:
            ap.error('--uniform takes KV_LEN:SPLITS')
        if kv_len < 0 or splits < 1:
            ap.error('--uniform: KV_LEN >= 0 and SPLITS >= 1')
        print(f'{"uniform":>8}  {"-":>9}  {"-":>10}  ' +
              '  '.join(f'{uniform_span(len(lengths), kv_len, splits, r, args.blocks):g}' for r in costs))


if __name__ == '__main__':
    main()
