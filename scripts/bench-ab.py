#!/usr/bin/env python3
"""Old against new from `mlacheck bench --json` runs of two binaries alternated in one device call.

usage: scripts/bench-ab.py --old A1.json[,A2.json...] --new B1.json[,B2.json...] [--names old,new]

For each row (strategy, case) of the old runs that the new runs also have, in the old runs' order:
each run's median µs on both sides, and new/old = the median of the new runs' medians over the
median of the old runs' medians. Then the median of those ratios over the rows with their range (the
figure docs/PERF.md reports as "median new/old"), and the rows only one side has. Alternate the two
binaries (A B A B) in the call so that a drift of the card's clock falls on both.
Exit 2 when a file cannot be read or is not a bench JSON.
"""
import argparse
import json
import statistics
import sys


def load(paths):
    """{(strategy, case): [median µs of each run]}, rows in first-seen order."""
    rows = {}
    for path in paths.split(","):
        try:
            with open(path) as f:
                run = json.load(f)
            entries = run["rows"]
            for r in entries:
                rows.setdefault((r["strategy"], r["case"]), []).append(float(r["median_us"]))
        except OSError as e:
            raise SystemExit(f"bench-ab: cannot read {path}: {e.strerror}")
        except (ValueError, KeyError, TypeError):
            raise SystemExit(f"bench-ab: {path} is not `mlacheck bench --json` output (rows with strategy, case, median_us)")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--names", default="old,new")
    args = ap.parse_args()
    names = args.names.split(",")
    if len(names) != 2:
        print("bench-ab: --names takes two names, old first", file=sys.stderr)
        return 2
    try:
        old, new = load(args.old), load(args.new)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    ratios = []
    print(f"| strategy | case | {names[0]} µs | {names[1]} µs | {names[1]}/{names[0]} |")
    print("|---|---|---|---|---|")
    for key, a in old.items():
        if key not in new:
            continue
        b = new[key]
        ratio = statistics.median(b) / statistics.median(a)
        ratios.append(ratio)
        cell = lambda runs: " / ".join(f"{x:.1f}" for x in runs)
        print(f"| {key[0]} | {key[1]} | {cell(a)} | {cell(b)} | {ratio:.3f} |")
    if ratios:
        print(f"\nmedian {names[1]}/{names[0]} {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f}) over {len(ratios)} rows")
    else:
        print(f"\nno row in both {names[0]} and {names[1]}")
    for side, mine, other in ((names[0], old, new), (names[1], new, old)):
        only = [k for k in mine if k not in other]
        if only:
            print(f"only in {side}: " + ", ".join(f"{s} on {c}" for s, c in only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
