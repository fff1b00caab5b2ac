#!/usr/bin/env python3
"""scripts/bench-ab.py on made-up `bench --json` runs: each row's runs on both sides, new/old as the
ratio of the medians of the runs' medians, the median of the ratios and their range, the rows only
one side has, and exit 2 on a file that cannot be read or is not bench output.

usage: check_bench_ab.py SCRIPT WORK_DIR
"""
import json
import os
import subprocess
import sys


def write(path, rows):
    with open(path, "w") as f:
        json.dump({"rows": [{"strategy": s, "case": c, "median_us": m, "p10_us": m, "p90_us": m} for s, c, m in rows]}, f)


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def main() -> int:
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)
    # Old: two runs; new: three runs (the median of three is the middle one, not the mean).
    write(p("a1.json"), [("s/x", "c1", 10.0), ("s/x", "c2", 20.0), ("s/old-only", "c1", 5.0)])
    write(p("a2.json"), [("s/x", "c1", 12.0), ("s/x", "c2", 20.0)])
    write(p("b1.json"), [("s/x", "c1", 9.0), ("s/x", "c2", 30.0), ("s/new-only", "c3", 1.0)])
    write(p("b2.json"), [("s/x", "c1", 11.0), ("s/x", "c2", 10.0)])
    write(p("b3.json"), [("s/x", "c1", 100.0), ("s/x", "c2", 22.0)])

    r = run(script, "--old", p("a1.json") + "," + p("a2.json"), "--new", ",".join(p(f"b{i}.json") for i in (1, 2, 3)),
            "--names", "main,branch")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    # c1: old median 11, new runs 9 / 11 / 100 -> median 11: 1.000; c2: old 20, new 30 / 10 / 22 -> 22: 1.100.
    assert out[0] == "| strategy | case | main µs | branch µs | branch/main |", out[0]
    assert out[2] == "| s/x | c1 | 10.0 / 12.0 | 9.0 / 11.0 / 100.0 | 1.000 |", out[2]
    assert out[3] == "| s/x | c2 | 20.0 / 20.0 | 30.0 / 10.0 / 22.0 | 1.100 |", out[3]
    assert "median branch/main 1.050 (1.000-1.100) over 2 rows" in out, out
    assert "only in main: s/old-only on c1" in out, out
    assert "only in branch: s/new-only on c3" in out, out

    r = run(script, "--old", p("a1.json"), "--new", p("missing.json"))
    assert r.returncode == 2 and "cannot read" in r.stderr, (r.returncode, r.stderr)
    with open(p("not-bench.json"), "w") as f:
        json.dump({"cases": []}, f)
    r = run(script, "--old", p("not-bench.json"), "--new", p("a1.json"))
    assert r.returncode == 2 and "not `mlacheck bench --json` output" in r.stderr, (r.returncode, r.stderr)
    r = run(script, "--old", p("a1.json"), "--new", p("b1.json"), "--names", "one")
    assert r.returncode == 2 and "two names" in r.stderr, (r.returncode, r.stderr)
    print("bench-ab: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
