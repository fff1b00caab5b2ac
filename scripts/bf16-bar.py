#!/usr/bin/env python3
"""Issue 10's bf16 bar from one device run: mlacheck's fastest bf16 strategy against the better of
FlashMLA and FlashInfer on every harness shape, with the margin the issue asks for; with --recipes
and --sglang, the fp8 bar the same way (mlacheck's fastest fp8 strategy against sglang's Triton
kernel: faster on every row, --margin 0).

usage: scripts/bf16-bar.py --mlacheck BENCH.json [BENCH.json ...] [--flashinfer results.jsonl]
                           [--flashmla fmla-results.jsonl] [--sglang sgl-results.jsonl
                           --sglang-format bf16|fp8] [--seeds seed-results.jsonl --seeds-format bf16|fp8]
                           [--recipes a16w16] [--margin 0.05]

BENCH.json: `mlacheck bench --graph --json` (one file a repetition of the ledger; every a16w16
strategy in it counts). results.jsonl: ../shared/tools/flashinfer-bench's (every backend and page
size it ran; the fastest graph replay whose eager and graph outputs passed its check).
fmla-results.jsonl: scripts/flashmla-bench's (graph replay, when its reference check passed).
sgl-results.jsonl: scripts/sglang-bench's (every split count and launch it swept; the fastest graph
replay of the format --sglang-format names whose output passed its check). seed-results.jsonl:
scripts/seed-bench's (the competition submissions: the fastest graph replay, eager and graph outputs
checked, of a call that read only the cache format --seeds-format names). --recipes: the recipes
whose strategies are mlacheck's side (default a16w16).

A shape is compared by name and by batch: where both sides' results give the batch's request and
key counts (mlacheck's `batch` and `total_kv`, FlashInfer's `B` and `total_kv`, FlashMLA's `batch` and
`total_kv`), a result of another batch under the same name (FlashInfer's own ragged lengths against
mlacheck's ragged_bs32_kv4096) is shown as such and is not the bar.

Where mlacheck's runs give the bytes a call must read and the measured read ceiling, a row not met
whose bar asks for less time than those bytes take at that ceiling says so ("under the read floor").

Judged conservatively: mlacheck's figure for a shape is its best strategy's median in each file,
and the slowest of those over the files; a row is met when that figure is below the fastest of the
other kernels' graph times by at least MARGIN (and by something at MARGIN 0: a tie is not faster). A kernel whose output failed its own check is
shown as WRONG and is not the bar (a wrong kernel is no competitor), and a shape with no other
kernel measured is "no bar", never met. Exit status: 0 when the table was made (met or not), 2 on
unusable input.
"""
import argparse
import json
import sys

BF16_RECIPE = "a16w16"
SGLANG_FORMATS = ("bf16", "fp8")
SEED_FORMATS = ("bf16", "fp8", "mxfp4")


def fail(message):
    print(f"bf16-bar.py: {message}", file=sys.stderr)
    sys.exit(2)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def load_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as e:
                        fail(f"{path}:{number}: {e}")
    except OSError as e:
        fail(str(e))
    return rows


def ours_per_shape(paths, recipes):
    """The cases in order; {case: (slowest over files of the best median of the recipes' strategies, fastest of them, strategy
    of the slowest, files holding it)}; {case: (requests, keys)}; {case: µs its bytes take at the fastest
    read ceiling measured}."""
    per_file = []
    order = []
    shape_of = {}
    floor_of = {}
    for path in paths:
        run = load_json(path)
        if not run.get("graph", False):
            fail(f"{path}: not a graph-replay run (`mlacheck bench --graph`): the others are timed in graph replay")
        ceiling = run.get("read_ceiling", {}).get("gbps")
        best = {}
        for r in run.get("rows", []):
            if r.get("strategy", "").split("/")[0] not in recipes or "median_us" not in r:
                continue
            case = r["case"]
            if case not in order:
                order.append(case)
            if "batch" in r and "total_kv" in r:
                shape = (r["batch"], r["total_kv"])
                if shape_of.setdefault(case, shape) != shape:
                    fail(f"{path}: case {case} is a batch of {shape} here and of {shape_of[case]} elsewhere")
            if case not in best or r["median_us"] < best[case][0]:
                best[case] = (r["median_us"], r["strategy"])
            if ceiling and r.get("bytes"):  # the bytes read at the fastest ceiling measured: the lowest floor
                floor_of[case] = min(floor_of.get(case, float("inf")), r["bytes"] / (ceiling * 1e3))
        if not best:
            fail(f"{path}: no row of {', '.join(recipes)}")
        per_file.append(best)
    ours = {}
    for case in order:
        seen = [b[case] for b in per_file if case in b]
        slowest = max(seen)
        ours[case] = (slowest[0], min(seen)[0], slowest[1], len(seen))
    return order, ours, shape_of, floor_of


def flashinfer_per_shape(path):
    """{shape: (fastest correct graph µs, its configuration) or ('WRONG', detail)}, and {shape: batch}."""
    best, wrong, batch = {}, {}, {}
    for r in load_jsonl(path):
        shape, us = r.get("shape"), r.get("us_graph")
        if shape is None or us is None:
            continue
        if "B" in r and "total_kv" in r:
            batch[shape] = (r["B"], r["total_kv"])
        config = f"{r.get('backend', '?')}, page {r.get('page_size', '?')}"
        if not r.get("ok", False) or r.get("graph_ok") is False:
            wrong.setdefault(shape, config)
            continue
        if shape not in best or us < best[shape][0]:
            best[shape] = (us, config)
    return {s: best.get(s, ("WRONG", wrong.get(s))) for s in set(best) | set(wrong)}, batch


def flashmla_per_shape(path):
    out, batch = {}, {}
    for r in load_jsonl(path):
        shape, us = r.get("shape"), r.get("us_graph")
        if shape is None or us is None:
            continue
        out[shape] = (us, "") if r.get("ok", False) else ("WRONG", f"rel {r.get('rel_fro')}")
        if "batch" in r and "total_kv" in r:
            batch[shape] = (r["batch"], r["total_kv"])
    return out, batch


def sglang_per_shape(path, fmt):
    """{shape: (fastest graph µs of a configuration whose output passed, 'splits N[, PDL]') or ('WRONG',
    detail)}, and {shape: batch}: the rows of format fmt (the sweep's and the fastest's longer re-timing
    both count: the other kernel's best figure is its bar)."""
    best, wrong, batch = {}, {}, {}
    for r in load_jsonl(path):
        shape = r.get("shape")
        if shape is None or r.get("format") != fmt:
            continue
        if "batch" in r and "kv_len" in r:
            batch[shape] = (r["batch"], r["batch"] * r["kv_len"])
        config = f"splits {r.get('splits', '?')}" + (", PDL" if r.get("pdl") else "")
        if not r.get("ok", False) or r.get("graph_ok") is False:
            if r.get("graph_ok") is False:
                wrong.setdefault(shape, f"{config}: graph replay rel {r.get('graph_rel_fro', float('nan')):.3g}")
            elif "rel_fro" in r:  # an output off the reference; a refused configuration ('error') is no output
                wrong.setdefault(shape, f"{config}: rel {r['rel_fro']:.3g}")
            continue
        times = [r[k] for k in ("us_graph", "us_graph_best") if r.get(k) is not None]
        if times and (shape not in best or min(times) < best[shape][0]):
            best[shape] = (min(times), config)
    return {s: best.get(s, ("WRONG", wrong.get(s))) for s in set(best) | set(wrong)}, batch


def seeds_per_shape(path, fmt):
    """{shape: (fastest graph µs of a submission whose call read only the fmt cache and whose outputs
    passed, its name) or ('WRONG', detail)}, and {shape: batch}."""
    best, wrong, batch = {}, {}, {}
    for r in load_jsonl(path):
        shape = r.get("shape")
        if shape is None or r.get("kv_read") != [fmt]:
            continue
        if "batch" in r and "total_kv" in r:
            batch[shape] = (r["batch"], r["total_kv"])
        if not r.get("ok", False) or r.get("graph_ok") is False:
            if "rel_fro" in r:
                wrong.setdefault(shape, f"{r.get('seed', '?')}: rel {r['rel_fro']:.3g}")
            continue
        us = r.get("us_graph")
        if us is not None and (shape not in best or us < best[shape][0]):
            best[shape] = (us, r.get("seed", "?"))
    return {s: best.get(s, ("WRONG", wrong.get(s))) for s in set(best) | set(wrong)}, batch


def same_batch(entry, theirs, mine):
    """entry unless the other kernel timed another batch under the name (then a cell saying so)."""
    if entry is None or theirs is None or mine is None or tuple(theirs) == tuple(mine):
        return entry
    return ("OTHER", f"{theirs[0]} requests, {theirs[1]} keys; mlacheck's {mine[0]}, {mine[1]}")


def cell(entry):
    if entry is None:
        return "-"
    value, detail = entry
    if value in ("WRONG", "OTHER"):
        label = "WRONG" if value == "WRONG" else "another batch"
        return f"{label} ({detail})" if detail else label
    return f"{value:.1f}" + (f" ({detail})" if detail else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mlacheck", nargs="+", required=True, metavar="BENCH.json")
    ap.add_argument("--flashinfer", metavar="results.jsonl")
    ap.add_argument("--flashmla", metavar="fmla-results.jsonl")
    ap.add_argument("--sglang", metavar="sgl-results.jsonl")
    ap.add_argument("--sglang-format", choices=SGLANG_FORMATS, help="which of sglang's rows are the bar (required with --sglang)")
    ap.add_argument("--seeds", metavar="seed-results.jsonl")
    ap.add_argument("--seeds-format", choices=SEED_FORMATS, help="which cache format's calls are the bar (required with --seeds)")
    ap.add_argument("--recipes", default=BF16_RECIPE, help="comma-separated recipes whose strategies are mlacheck's side")
    ap.add_argument("--margin", type=float, default=0.05, help="the fraction ahead a row needs (issue 10: 0.05)")
    args = ap.parse_args()
    if not 0.0 <= args.margin < 1.0:
        fail(f"--margin {args.margin}: want a fraction in [0, 1)")
    if args.flashinfer is None and args.flashmla is None and args.sglang is None and args.seeds is None:
        fail("no other kernel's results (--flashinfer, --flashmla, --sglang, --seeds): nothing to compare with")
    if (args.sglang is None) != (args.sglang_format is None):
        fail("--sglang and --sglang-format go together (which of its formats is the bar)")
    if (args.seeds is None) != (args.seeds_format is None):
        fail("--seeds and --seeds-format go together (which cache format's calls are the bar)")
    recipes = [r for r in args.recipes.split(",") if r]
    if not recipes:
        fail("--recipes names no recipe")
    order, ours, shape_of, floor_of = ours_per_shape(args.mlacheck, recipes)
    fi, fi_batch = flashinfer_per_shape(args.flashinfer) if args.flashinfer else ({}, {})
    fmla, fmla_batch = flashmla_per_shape(args.flashmla) if args.flashmla else ({}, {})
    sgl, sgl_batch = sglang_per_shape(args.sglang, args.sglang_format) if args.sglang else ({}, {})
    seeds, seeds_batch = seeds_per_shape(args.seeds, args.seeds_format) if args.seeds else ({}, {})

    ahead = f"at least {args.margin:.0%} faster" if args.margin > 0 else "faster"
    print(f"mlacheck: per shape, the slowest of its runs ({len(args.mlacheck)} file(s)) of the best strategy of "
          f"{', '.join(recipes)}; met = {ahead} than the best of the others (graph replay, µs)\n")
    sgl_head, sgl_rule = (f" sglang Triton ({args.sglang_format}) |", "---|") if args.sglang else ("", "")
    seeds_head, seeds_rule = (f" submissions ({args.seeds_format}) |", "---|") if args.seeds else ("", "")
    print(f"| shape | mlacheck (range, strategy) | FlashInfer | FlashMLA |{sgl_head}{seeds_head} bar | margin | met |")
    print(f"|---|---|---|---|{sgl_rule}{seeds_rule}---|---|---|")
    met = judged = 0
    for shape in order:
        slowest, fastest, strategy, runs = ours[shape]
        fi_entry = same_batch(fi.get(shape), fi_batch.get(shape), shape_of.get(shape))
        fmla_entry = same_batch(fmla.get(shape), fmla_batch.get(shape), shape_of.get(shape))
        sgl_entry = same_batch(sgl.get(shape), sgl_batch.get(shape), shape_of.get(shape))
        seeds_entry = same_batch(seeds.get(shape), seeds_batch.get(shape), shape_of.get(shape))
        others = [e[0] for e in (fi_entry, fmla_entry, sgl_entry, seeds_entry)
                  if e is not None and e[0] not in ("WRONG", "OTHER")]
        mine = f"{fastest:.1f}-{slowest:.1f}" if f"{fastest:.1f}" != f"{slowest:.1f}" else f"{slowest:.1f}"
        if not others:
            verdict, margin, bar = "no bar", "-", "-"
        else:
            bar_us = min(others)
            margin_value = 1.0 - slowest / bar_us
            judged += 1
            ok = margin_value >= args.margin and margin_value > 0
            met += ok
            verdict, margin, bar = ("yes" if ok else "**no**"), f"{margin_value:.1%}", f"{bar_us:.1f}"
            # A bar that asks for less time than reading the batch's bytes at the measured read
            # ceiling: no kernel that reads the cache once can meet it on this card.
            need_us = bar_us * (1.0 - args.margin)
            if not ok and shape in floor_of and need_us < floor_of[shape]:
                verdict += f" (needs {need_us:.1f}, under the read floor {floor_of[shape]:.1f})"
        sgl_cell = f" {cell(sgl_entry)} |" if args.sglang else ""
        seeds_cell = f" {cell(seeds_entry)} |" if args.seeds else ""
        print(f"| {shape} | {mine} ({strategy}) | {cell(fi_entry)} | {cell(fmla_entry)} |{sgl_cell}{seeds_cell} {bar} | "
              f"{margin} | {verdict} |")
    print(f"\nmet on {met} of {judged} shapes with a bar ({len(order)} shapes measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
