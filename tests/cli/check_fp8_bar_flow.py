#!/usr/bin/env python3
"""scripts/fp8-bar.sh's flow without a GPU: a stand-in mlacheck (bench writes a graph-replay JSON of an
fp8 and a bf16 strategy), a stand-in sglang-bench run.sh (fp8 and bf16 rows) and a stand-in
seed-bench run.sh (a submission's fp8 call). The script must make both tables from the two ledgers
and the others' results (the fp8 one with the fp8 recipes against the fp8 rows only), with BAR_PACK=1
leave only all.tgz and bar-fp8.md, skip a missing seeds bundle saying so, and refuse a missing sglang
bundle before timing anything.

usage: check_fp8_bar_flow.py REPO WORK_DIR
"""
import os
import shutil
import subprocess
import sys
import tarfile

repo, work = sys.argv[1], os.path.abspath(sys.argv[2])
failures = []


def expect(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(f"{work}/build/cli")
os.makedirs(f"{work}/sgl")
os.makedirs(f"{work}/seeds")
with open(f"{work}/seeds/run.sh", "w") as f:
    f.write('''mkdir -p "$OUT"
cat > "$OUT/seed-results.jsonl" <<'ROWS'
{"seed": "002.txt", "shape": "bs4_kv1024", "batch": 4, "total_kv": 4096, "kv_read": ["fp8"], "ok": true, "graph_ok": true, "rel_fro": 0.03, "us_graph": 14.5}
{"seed": "001.txt", "shape": "bs4_kv1024", "batch": 4, "total_kv": 4096, "kv_read": ["mxfp4"], "ok": true, "graph_ok": true, "rel_fro": 0.03, "us_graph": 13.0}
ROWS
''')
fake_mlacheck = f"{work}/build/cli/mlacheck"
with open(fake_mlacheck, "w") as f:
    f.write('''#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
assert args[0] == "bench" and "--graph" in args, args
rows = [{"case": "bs4_kv1024", "strategy": s, "median_us": us, "batch": 4, "total_kv": 4096, "bytes": 1000}
        for s, us in (("a8w8-cast/split-k/hopper", 14.0), ("a16w16/split-k/hopper", 12.0),
                      ("a16w4/split-k/hopper", 13.5))]
json.dump({"graph": True, "read_ceiling": {"gbps": 3000.0}, "rows": rows}, open(args[args.index("--json") + 1], "w"))
print("bench rows:", len(rows))
''')
os.chmod(fake_mlacheck, 0o755)
with open(f"{work}/sgl/run.sh", "w") as f:
    f.write('''mkdir -p "$OUT"
cat > "$OUT/sgl-results.jsonl" <<'ROWS'
{"shape": "bs4_kv1024", "format": "fp8", "batch": 4, "kv_len": 1024, "splits": 4, "pdl": false, "ok": true, "rel_fro": 0.02, "us_graph": 15.0}
{"shape": "bs4_kv1024", "format": "bf16", "batch": 4, "kv_len": 1024, "splits": 4, "pdl": false, "ok": true, "rel_fro": 0.002, "us_graph": 11.0}
ROWS
''')
with open(f"{work}/sgl/sglang.version", "w") as f:
    f.write("sglang-stand-in\n")

shutil.rmtree(f"{work}/out", ignore_errors=True)
env = dict(os.environ, OUT=f"{work}/out", BAR_PACK="1")
p = subprocess.run(["bash", "scripts/fp8-bar.sh", f"{work}/build", f"{work}/sgl", f"{work}/seeds"], cwd=repo,
                   env=env, capture_output=True, text=True)
print(p.stdout[-3000:], p.stderr[-2000:])
expect(p.returncode == 0, f"exit 0 when every step passed (got {p.returncode})")
left = sorted(os.listdir(f"{work}/out")) if os.path.isdir(f"{work}/out") else []
expect(left == ["all.tgz", "bar-fp8.md"], f"BAR_PACK=1 leaves all.tgz and bar-fp8.md (left: {left})")
bar = open(f"{work}/out/bar-fp8.md").read() if "bar-fp8.md" in left else ""
expect("| bs4_kv1024 | 14.0 (a8w8-cast/split-k/hopper) |" in bar and "| 15.0 (splits 4) | 14.5 (002.txt) | 14.5 |" in bar
       and "| yes |" in bar,
       "the fp8 table: a8w8-cast's 14.0 against sglang's fp8 15.0 and the submission's 14.5, met (a16w16's 12.0 "
       "and sglang's bf16 11.0 not in it)")
expect("12.0 (a16w16/split-k/hopper)" in p.stdout and "| **no** |" in p.stdout,
       "the bf16 table: a16w16's 12.0 against sglang's bf16 11.0, not met")
expect("13.5 (a16w4/split-k/hopper)" in p.stdout and "| 13.0 (001.txt) | 13.0 |" in p.stdout,
       "the MXFP4 table: a16w4's 13.5 against the submission's MXFP4 call 13.0 (not met)")
if "all.tgz" in left:
    names = tarfile.open(f"{work}/out/all.tgz").getnames()
    expect(any(n.endswith("sgl/sgl-results.jsonl") for n in names) and any(n.endswith("bench-2.json") for n in names)
           and any(n.endswith("seeds/seed-results.jsonl") for n in names)
           and any(n.endswith("bar-bf16.md") for n in names) and any(n.endswith("bar-mxfp4.md") for n in names),
           "all.tgz holds sglang's and the submissions' results, both ledgers and the bf16 table")

shutil.rmtree(f"{work}/out", ignore_errors=True)
p = subprocess.run(["bash", "scripts/fp8-bar.sh", f"{work}/build", f"{work}/sgl", f"{work}/no-seeds"], cwd=repo,
                   env=dict(os.environ, OUT=f"{work}/out"), capture_output=True, text=True)
bar = open(f"{work}/out/bar-fp8.md").read() if os.path.exists(f"{work}/out/bar-fp8.md") else ""
expect(p.returncode == 0 and "submissions: no" in p.stdout and "skipped" in p.stdout
       and "| 15.0 (splits 4) | 15.0 |" in bar,
       "a missing seeds bundle is skipped, saying so; sglang alone is the bar")

shutil.rmtree(f"{work}/out", ignore_errors=True)
p = subprocess.run(["bash", "scripts/fp8-bar.sh", f"{work}/build", f"{work}/no-sgl"], cwd=repo,
                   env=dict(os.environ, OUT=f"{work}/out"), capture_output=True, text=True)
expect(p.returncode == 2 and "no-sgl/run.sh" in p.stderr and not os.path.exists(f"{work}/out"),
       "a missing sglang bundle is refused before anything is timed")
shutil.rmtree(work, ignore_errors=True)
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
