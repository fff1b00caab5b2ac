#!/usr/bin/env python3
"""Ranks a kernel's SASS instructions by Nsight Compute's warp-stall samples: where its warps wait.

usage: scripts/ncu-stalls.py SOURCE.csv [--top N] [--context K]

SOURCE.csv is what `ncu -i REPORT.ncu-rep --page source --csv --print-source sass` prints for a report
collected with `--section SourceCounters` (docs/PERF.md, device run 2 of 2026-12-04's fifth session:
`ncu --clock-control none -k regex:attention --launch-count 1 --section WarpStateStats --section
SourceCounters -o REPORT mlacheck bench --strategy S --case C --reps 1 --warmup 0` on the device, then
this script there). Prints the sampled total, the N instructions with the most samples (share of all,
times executed, their four largest stall reasons), then the first CONTEXT_OF of those with the K
instructions before each: a sampled wait usually sits right after what it waits for (the BAR.SYNC before a BSSY, the
SYNCS.PHASECHK try-wait before its branch). Exit 2 with a message when the file is not such a CSV.
"""
import argparse
import csv
import sys

TOTAL = "Warp Stall Sampling (All Samples)"
CONTEXT_OF = 10  # instructions shown with what precedes them: the few that hold most samples


def number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--context", type=int, default=8)
    args = ap.parse_args()
    try:
        with open(args.csv, newline="", errors="replace") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        print(f"ncu-stalls: cannot read {args.csv}: {e.strerror}", file=sys.stderr)
        return 2
    header_at = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r and TOTAL in r), None)
    if header_at is None:
        print(f"ncu-stalls: {args.csv} has no row naming Address, Source and '{TOTAL}': not the SASS source "
              "page of a report with the SourceCounters section", file=sys.stderr)
        return 2
    header = rows[header_at]
    at = {name: i for i, name in enumerate(header)}
    body = [r for r in rows[header_at + 1:] if len(r) == len(header)]
    reasons = [i for i, name in enumerate(header) if name.startswith("stall_") and "(Not Issued)" not in name]
    executed = at.get("Instructions Executed")
    total = sum(number(r[at[TOTAL]]) for r in body)
    print(f"{len(body)} instructions, {total:.0f} stall samples")
    if total == 0:
        return 0
    order = sorted(range(len(body)), key=lambda i: -number(body[i][at[TOTAL]]))[: args.top]
    print("\n  share  address         executed  instruction / largest reasons")
    for i in order:
        r = body[i]
        top = sorted(((number(r[c]), header[c]) for c in reasons if number(r[c]) > 0), reverse=True)[:4]
        ran = r[executed] if executed is not None else "-"
        print(f"{100 * number(r[at[TOTAL]]) / total:6.1f}%  {r[at['Address']]:>14s}  {ran:>8s}  "
              f"{r[at['Source']].strip()}  [{', '.join(f'{name} {value:.0f}' for value, name in top)}]")
    print(f"\nthe first {min(CONTEXT_OF, len(order))} with the {args.context} instructions before each (samples, instruction):")
    for i in order[:CONTEXT_OF]:
        print(f"--- {body[i][at['Address']]}")
        for r in body[max(0, i - args.context): i + 1]:
            print(f"  {r[at['Address']][-6:]} {number(r[at[TOTAL]]):7.0f}  {r[at['Source']].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
