#!/usr/bin/env python3
"""Formats `mlacheck bench --json` output as the markdown tables of docs/PERF.md.

usage: scripts/bench-table.py BENCH.json [--targets] [--layout]
One row per strategy, one column per case: median µs (achieved GB/s as % of the run's measured
read ceiling). With --targets, a second table compares the best strategy per KV format with the
fastest kernels the issue measured on the same GPU (issue 5's table: FlashMLA for bf16, the best
of the competition's Triton kernels / sglang / FlashMLA sparse for fp8, the competition's
dot_scaled kernels for mxfp4). With --layout, for a run of data/cases/layout_cost.txt (each ragged
or paged case followed, after any others of its kind, by the uniform case of the same key count):
per recipe, each ragged or paged case's best time over the recipe's schedules against its uniform
twin's best, issue 10's "within 10 % of the uniform case of the same byte count".
"""
import json
import sys

# Issue 5's table (µs, median, L2 flushed, H200): the fastest kernel measured there per format.
BEST_KNOWN = {
    "bs4_kv1024": (17.2, 19.2, 19.6), "bs4_kv8192": (30.6, 35.4, 45.9),
    "bs32_kv1024": (26.6, 33.4, 44.8), "bs32_kv8192": (95.9, 123.2, 256.0),
    "bs64_kv1024": (38.4, 49.4, 75.1), "bs64_kv8192": (170.7, 218.8, 486.0),
    "bs256_kv1024": (94.8, 121.9, 254.0), "bs256_kv8192": (615.7, 842.5, 1857.0),
}
FORMAT_OF = {"a16w16": 0, "a16w8": 1, "a8w8": 1, "a8w8-static": 1, "a8w8-cast": 1,
             "a16w4": 2, "a4w4": 2}


def main() -> None:
    run = json.load(open(sys.argv[1]))
    rows = run["rows"]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    at = {(r["strategy"], r["case"]): r for r in rows}
    print(f"{run['version']}; {run['device']['name']}; read ceiling "
          f"{run['read_ceiling']['gbps']:.0f} GB/s; {'graph replay' if run['graph'] else 'stream launches'}, "
          f"{run['reps']} reps, L2 flushed ({run['flush_mb']} MB)\n")
    print("| strategy | " + " | ".join(cases) + " |")
    print("|---|" + "---|" * len(cases))
    for s in strategies:
        cells = []
        for c in cases:
            r = at.get((s, c))
            cells.append(f"{r['median_us']:.1f} ({r['pct_of_read_ceiling']:.1f}%)" if r else "-")
        print(f"| {s} | " + " | ".join(cells) + " |")
    if "--layout" in sys.argv:
        print_layout(rows)
    if "--targets" not in sys.argv:
        return
    print("\n| format: best strategy vs best known | " + " | ".join(cases) + " |")
    print("|---|" + "---|" * len(cases))
    for fmt_index, fmt in enumerate(("bf16", "fp8", "mxfp4")):
        cells = []
        for c in cases:
            mine = [at[(s, c)] for s in strategies
                    if (s, c) in at and FORMAT_OF.get(s.split("/")[0]) == fmt_index]
            if not mine or c not in BEST_KNOWN:
                cells.append("-")
                continue
            best = min(mine, key=lambda r: r["median_us"])
            known = BEST_KNOWN[c][fmt_index]
            cells.append(f"{best['median_us']:.1f} vs {known} ({known / best['median_us']:.2f}x)")
        print(f"| {fmt} | " + " | ".join(cells) + " |")


def layout_twins(cases):
    """Each ragged_* or paged_* case and the first uniform_* case after it (layout_cost.txt's order)."""
    twins = {}
    for i, c in enumerate(cases):
        if c.startswith(("ragged_", "paged_")):
            twin = next((u for u in cases[i + 1:] if u.startswith("uniform_")), None)
            if twin is not None:
                twins[c] = twin
    return twins


def print_layout(rows) -> None:
    cases = list(dict.fromkeys(r["case"] for r in rows))
    twins = layout_twins(cases)
    if not twins:
        print("\nno ragged_* or paged_* case with a uniform_* case after it: nothing to compare")
        return
    recipes = list(dict.fromkeys(r["strategy"].split("/")[0] for r in rows))

    def best(recipe, case):
        mine = [r for r in rows if r["case"] == case and r["strategy"].split("/")[0] == recipe]
        return min(mine, key=lambda r: r["median_us"]) if mine else None

    print("\n| recipe: best / uniform twin's best, µs | " + " | ".join(f"{c} / {t}" for c, t in twins.items()) + " |")
    print("|---|" + "---|" * len(twins))
    for recipe in recipes:
        cells = []
        for case, twin in twins.items():
            a, b = best(recipe, case), best(recipe, twin)
            if a is None or b is None:
                cells.append("-")
                continue
            ratio = a["median_us"] / b["median_us"]
            cells.append(f"{a['median_us']:.1f} / {b['median_us']:.1f} = {ratio:.2f}x{'' if ratio <= 1.10 else ' (over 1.10)'}")
        print(f"| {recipe} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
