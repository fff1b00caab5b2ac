#!/usr/bin/env python3
"""scripts/plan-makespan.py on batches whose balanced cuts are worked out by hand (problem/split_plan.h):
the busiest block's tiles and pieces under the cut the plan takes (the equal cut, or one piece a block
where that is taken), a length list and a safetensors file with an empty request, and
the refusal of a file without kv_indptr; the optimal contiguous cut, the one-piece-a-block cut and the
uniform split-K figure on batches worked out by hand, and the optimum never above any plan's (nor the
one-piece cut's) on pseudo-random batches.

usage: check_plan_makespan.py SCRIPT WORK_DIR
"""
import json
import os
import struct
import subprocess
import sys


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def write_safetensors(path, name, values):
    data = struct.pack(f'<{len(values)}i', *values)
    header = json.dumps({name: {'dtype': 'I32', 'shape': [len(values)], 'data_offsets': [0, len(data)]}}).encode()
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(header)) + header + data)


def main() -> int:
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    # Two requests of 10 tiles, 4 blocks, overhead 2: 24 units, Q = 6 (the equal cut's shares [0,6)
    # [6,12) [12,18) [18,24) would hold 4, 6, 4 and 6 tiles); one piece a block needs P = 5 <= Q, so
    # the plan takes that cut (split_plan.h one_piece::taken): 5 tiles, one piece, 5 + r.
    r = run(script, '--lengths', '640,640', '--blocks', '4', '--overheads', '2', '--r', '1')
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == 'requests 2, tiles 20, blocks 4, tiles a block if spread evenly 5.00', out[0]
    assert out[2].split() == ['2', '5', '1', '6', '1/block'], out[2]
    # Fewer requests than blocks, yet the equal cut: 100, 1 and 1 tiles, 4 blocks, overhead 0: Q = 26,
    # one piece a block needs ceil(100 / P) <= 2, P = 50 > Q. Shares of 26 cut request 0 at 26, 52 and
    # 78; block 3 runs its last 22 tiles and both short requests: 24 tiles, 3 pieces; with r = 1 the
    # busiest is max(26 + 1, 24 + 3) = 27.
    r = run(script, '--lengths', '6400,64,64', '--blocks', '4', '--overheads', '0', '--r', '1')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2].split() == ['0', '26', '3', '27', 'equal'], r.stdout
    # Cutting each request in half instead (5 tiles + 1 piece a block) costs 6: the optimum, and
    # split-K on two requests of 640 keys in 2 splits (4 blocks of 5 tiles, one wave) the same.
    r = run(script, '--lengths', '640,640', '--blocks', '4', '--overheads', '2', '--r', '1,1.5', '--uniform', '640:2')
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[3].split() == ['optimal', '-', '-', '6', '6.5'], out[3]
    # One piece a block: 2 requests of 10 tiles in at most 4 pieces, P = 5 tiles: 5 + r.
    assert out[4].split() == ['1/block', '5', '1', '6', '6.5'], out[4]
    assert out[5].split() == ['uniform', '-', '-', '6', '6.5'], out[5]
    # 3, 1 and 3 tiles into 2 blocks, r = 1: {3, 1} | {3} costs 4 + 2; any cut of a request costs more
    # ({3} | {1, 3} the same 6, {3, 1, 1 of 3} | {2 of 3} 5 + 3). Split-K of 3 requests of 200 keys in
    # 3 splits: 9 blocks of 67 keys (2 tiles) in 5 waves of 2 blocks, 5 x (2 + 1).
    r = run(script, '--lengths', '192,64,192', '--blocks', '2', '--overheads', '0', '--r', '1', '--uniform', '200:3')
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[3].split() == ['optimal', '-', '-', '6'], out[3]
    assert out[4].split() == ['uniform', '-', '-', '15'], out[4]
    # Three empty requests, 2 blocks: one block takes two pieces.
    r = run(script, '--lengths', '0,0,0', '--blocks', '2', '--overheads', '1', '--r', '1')
    assert r.returncode == 0 and r.stdout.splitlines()[3].split() == ['optimal', '-', '-', '2'], r.stdout
    # The optimum is a lower bound of every plan's busiest block (each plan is one contiguous cut).
    lengths = [(i * 7919 + 13) % 3000 for i in range(40)]
    r = run(script, '--lengths', ','.join(map(str, lengths)), '--blocks', '13', '--overheads', '0,1,2,3,4,6',
            '--r', '0.5,1,2,3')
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:]]
    best = [float(x) for x in rows[-1][3:]]
    plans = [row[3:-1] for row in rows[:-1]]  # less the cut's name
    assert all(row[-1] == 'equal' for row in rows[:-1]), rows  # more requests than blocks
    for row in plans:
        assert all(b <= float(x) for b, x in zip(best, row)), (row, best)
    assert any(b < float(x) for row in plans for b, x in zip(best, row)), 'the optimum equals every plan'
    # 0, 3 and 2 tiles into 4 blocks, one piece each: P = 1 needs 1 + 3 + 2 = 6 pieces, P = 2 needs
    # 1 + 2 + 1 = 4: 2 tiles + r. With more requests than blocks there is no such cut (no row).
    r = run(script, '--lengths', '0,130,70', '--blocks', '4', '--overheads', '0', '--r', '1')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[4].split() == ['1/block', '2', '1', '3'], r.stdout
    r = run(script, '--lengths', '0,130,70', '--blocks', '2', '--overheads', '0', '--r', '1')
    assert r.returncode == 0 and '1/block' not in r.stdout, r.stdout
    # One piece a block is one contiguous cut: never below the optimum.
    lengths = [(i * 7919 + 13) % 3000 for i in range(10)]
    r = run(script, '--lengths', ','.join(map(str, lengths)), '--blocks', '40', '--overheads', '0',
            '--r', '0.5,1,2,3')
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: [float(x) for x in line.split()[3:] if x not in ('equal', '1/block')]
            for line in r.stdout.splitlines()[2:]}
    assert all(b <= x for b, x in zip(rows['optimal'], rows['1/block'])), rows
    r = run(script, '--lengths', '64', '--uniform', '64')
    assert r.returncode != 0 and 'KV_LEN:SPLITS' in r.stderr, (r.returncode, r.stderr)
    # Lengths 0, 130, 70 (0, 3 and 2 tiles), 2 blocks, overhead 1: 8 units, Q = 4. The empty request's
    # piece in block 0 (its overhead's share), the 3 tiles at units 2..4 split 2 / 1, the last 2 at
    # 6..7 in block 1: tiles 2 and 3, pieces 2 and 2; with r = 1 the busiest is 3 + 2.
    path = os.path.join(work, 'inputs.safetensors')
    write_safetensors(path, 'kv_indptr', [0, 0, 130, 200])
    r = run(script, path, '--blocks', '2', '--overheads', '1', '--r', '1')
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0].startswith('requests 3, tiles 5, blocks 2'), out[0]
    assert out[2].split() == ['1', '3', '2', '5', 'equal'], out[2]
    # Lengths 130, 0, 70 with no overhead: Q = 3; the empty request's units would start at 3, and
    # its piece goes to the share holding the unit before (split_plan.h piece_block): block 0, which
    # then has 3 tiles and 2 pieces (5 with r = 1); in block 1 (its own start) it would be 4.
    r = run(script, '--lengths', '130,0,70', '--blocks', '2', '--overheads', '0', '--r', '1')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2].split() == ['0', '3', '2', '5', 'equal'], r.stdout
    # A file without kv_indptr: refused with a message, nothing printed as a result.
    bad = os.path.join(work, 'other.safetensors')
    write_safetensors(bad, 'qo_indptr', [0, 1])
    r = run(script, bad)
    assert r.returncode != 0 and 'no kv_indptr' in (r.stderr + r.stdout), (r.returncode, r.stderr)
    print('plan-makespan: hand-worked cuts, optima and split-K figures reproduced, the optimum below every plan, '
          'the file without kv_indptr and a malformed --uniform refused')
    return 0


if __name__ == '__main__':
    sys.exit(main())
