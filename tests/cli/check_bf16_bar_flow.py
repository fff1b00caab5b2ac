#!/usr/bin/env python3
"""scripts/bf16-bar.sh's flow without a GPU: a stand-in mlacheck (bench writes a graph-replay JSON,
gen writes the inputs files) and a stand-in FlashInfer run.sh; FlashMLA absent. The script must make
the table from both ledgers and FlashInfer's results (its output folder given as a relative and as
an absolute path: the absolute one once sent FlashInfer's results astray, device call 2 of the
fifteenth session), say FlashMLA was skipped, and with BAR_PACK=1
leave only all.tgz and bar.md.

usage: check_bf16_bar_flow.py REPO WORK_DIR
"""
import json
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
os.makedirs(f"{work}/fi")
fake_mlacheck = f"{work}/build/cli/mlacheck"
with open(fake_mlacheck, "w") as f:
    f.write('''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if args[0] == "gen":
    out = args[args.index("-o") + 1]
    os.makedirs(out, exist_ok=True)
    for c in args[args.index("--cases") + 1].split(","):
        open(os.path.join(out, c + ".safetensors"), "wb").close()
    sys.exit(0)
assert args[0] == "bench", args
layout = "--plan-once" in args
cases = ["ragged_bs32_kv4096", "paged_p64_bs32_kv4096"] if layout else ["bs4_kv1024", "bs256_kv8192"]
rows = [{"case": c, "strategy": "a16w16/split-k/hopper", "median_us": 90.0, "batch": 4, "total_q": 4,
         "total_kv": 4096, "bytes": 1000} for c in cases]
json.dump({"graph": "--graph" in args, "read_ceiling": {"gbps": 3000.0}, "rows": rows},
          open(args[args.index("--json") + 1], "w"))
print("bench rows:", len(rows))
''')
os.chmod(fake_mlacheck, 0o755)
with open(f"{work}/fi/run.sh", "w") as f:
    f.write('''mkdir -p "$OUT"
for s in bs4_kv1024 bs256_kv8192; do
  echo "{\\"shape\\": \\"$s\\", \\"backend\\": \\"fa3\\", \\"page_size\\": 64, \\"ok\\": true, \\"graph_ok\\": true, \\"us_graph\\": 100.0, \\"B\\": 4, \\"total_kv\\": 4096}"
done > "$OUT/results.jsonl"
''')

for out_arg in (os.path.relpath(f"{work}/out", repo), f"{work}/out"):  # OUT relative, then absolute
    print(f"--- OUT={out_arg}")
    shutil.rmtree(f"{work}/out", ignore_errors=True)
    env = dict(os.environ, OUT=out_arg, BAR_PACK="1")
    p = subprocess.run(["bash", "scripts/bf16-bar.sh", f"{work}/build", f"{work}/fi", f"{work}/no-fmla"], cwd=repo,
                       env=env, capture_output=True, text=True)
    print(p.stdout[-3000:], p.stderr[-2000:])
    expect(p.returncode == 0, f"exit 0 when every step that ran passed (got {p.returncode})")
    expect("FlashMLA: no" in p.stdout and "skipped" in p.stdout, "a missing FlashMLA library is skipped, saying so")
    left = sorted(os.listdir(f"{work}/out")) if os.path.isdir(f"{work}/out") else []
    expect(left == ["all.tgz", "bar.md"], f"BAR_PACK=1 leaves all.tgz and bar.md (left: {left})")
    bar = open(f"{work}/out/bar.md").read() if "bar.md" in left else ""
    expect("| bs4_kv1024 | 90.0 (a16w16/split-k/hopper) | 100.0 (fa3, page 64) |" in bar,
           "the table holds mlacheck's row against FlashInfer's result")
    expect("met on 2 of 2 shapes with a bar (4 shapes measured)" in bar,
           "both ledgers' harness and layout rows are read; the layout rows have no bar without FlashMLA")
    if "all.tgz" in left:
        names = tarfile.open(f"{work}/out/all.tgz").getnames()
        expect(any(n.endswith("fi/results.jsonl") for n in names) and any(n.endswith("layout-2.json") for n in names)
               and not any(n.endswith(".safetensors") for n in names),
               "all.tgz holds FlashInfer's results and both ledgers, not the inputs files")
shutil.rmtree(work, ignore_errors=True)
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
