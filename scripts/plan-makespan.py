#!/usr/bin/env python3
"""What the hopper family's balanced plan gives its busiest block, for a batch's lengths.

The plan (problem/split_plan.h, namespace balanced) lays the batch out on one cost axis: request b
costs `overhead` units and then T_b = ceil(L_b / 64) tile units; the axis is cut into `blocks` equal
shares of Q = max(ceil(total / blocks), overhead + 1) units, and a block runs the pieces of requests
whose tiles fall in its share. This script reproduces those cuts (a model: nothing runs on a GPU)
and prints, for each plan overhead, the largest number of tiles a block gets, the largest number of
pieces, and the busiest block's tiles + r x pieces for a few per-piece costs r (in tiles), where a
piece's real fixed cost (Q staging, the epilogue) is what the plan's overhead stands for.

Usage: plan-makespan.py FILE.safetensors [--blocks 132] [--overheads 0,1,2,3,4,6] [--r 0.5,1,1.5,2,3]
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


def blocks_of(lengths, overhead, blocks):
    """Tiles and pieces of each block under the balanced plan (split_plan.h's arithmetic)."""
    units = [(length + TILE_KEYS - 1) // TILE_KEYS for length in lengths]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('file', nargs='?')
    ap.add_argument('--lengths', help='comma-separated key counts instead of a file')
    ap.add_argument('--blocks', type=int, default=132)
    ap.add_argument('--overheads', default='0,1,2,3,4,6')
    ap.add_argument('--r', default='0.5,1,1.5,2,3')
    args = ap.parse_args()
    if (args.file is None) == (args.lengths is None):
        ap.error('give FILE or --lengths')
    lengths = [int(x) for x in args.lengths.split(',')] if args.lengths else kv_lengths(args.file)
    if any(x < 0 for x in lengths) or args.blocks < 1:
        ap.error('lengths must be >= 0 and blocks >= 1')
    costs = [float(x) for x in args.r.split(',')]
    total_tiles = sum((x + TILE_KEYS - 1) // TILE_KEYS for x in lengths)
    print(f'requests {len(lengths)}, tiles {total_tiles}, blocks {args.blocks}, '
          f'tiles a block if spread evenly {total_tiles / args.blocks:.2f}')
    print('overhead  max tiles  max pieces  ' + '  '.join(f'r={r:g}' for r in costs))
    for overhead in (int(x) for x in args.overheads.split(',')):
        tiles, pieces = blocks_of(lengths, overhead, args.blocks)
        spans = [max(t + r * p for t, p in zip(tiles, pieces)) for r in costs]
        print(f'{overhead:8d}  {max(tiles):9d}  {max(pieces):10d}  ' + '  '.join(f'{s:g}' for s in spans))


if __name__ == '__main__':
    main()
