#!/usr/bin/env python3
"""scripts/bench-table.py --layout on a made-up `mlacheck bench --json` run of layout_cost-style
cases: each ragged or paged case paired with the first uniform case after it, the best schedule of
each recipe on both sides, the ratio, and the 10 % mark.

usage: check_bench_table_layout.py SCRIPT WORK_DIR
"""
import json
import os
import subprocess
import sys

# (case, strategy, median µs)
ROWS = [("ragged_bs32_kv4096", "a16w16/split-k/hopper", 45.0), ("ragged_bs32_kv4096", "a16w16/persistent/hopper", 29.0),
        ("ragged_bs32_kv4096", "a16w8/persistent/hopper", 30.0),
        ("uniform_bs32_kv881", "a16w16/split-k/hopper", 27.5), ("uniform_bs32_kv881", "a16w16/persistent/hopper", 28.0),
        ("uniform_bs32_kv881", "a16w8/persistent/hopper", 24.0),
        ("paged_p64_bs32_kv4096", "a16w16/split-k/hopper", 66.0), ("uniform_bs32_kv4096", "a16w16/split-k/hopper", 63.0)]


def main() -> int:
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "bench.json")
    run = {"version": "mlacheck test", "device": {"name": "made-up GPU"}, "read_ceiling": {"gbps": 3000.0},
           "graph": True, "reps": 30, "flush_mb": 256,
           "rows": [{"case": c, "strategy": s, "median_us": t, "pct_of_read_ceiling": 50.0} for c, s, t in ROWS]}
    with open(path, "w") as f:
        json.dump(run, f)
    r = subprocess.run([sys.executable, script, path, "--layout"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| recipe:"))
    assert "ragged_bs32_kv4096 / uniform_bs32_kv881" in header, header
    assert "paged_p64_bs32_kv4096 / uniform_bs32_kv4096" in header, header
    bf16 = next(line for line in lines if line.startswith("| a16w16 |"))
    # The best of each side over the recipe's schedules: 29.0 (persistent) against 27.5 (split-K).
    assert "29.0 / 27.5 = 1.05x |" in bf16, bf16
    assert "66.0 / 63.0 = 1.05x |" in bf16, bf16
    fp8 = next(line for line in lines if line.startswith("| a16w8 |"))
    assert "30.0 / 24.0 = 1.25x (over 1.10)" in fp8, fp8
    assert fp8.rstrip().endswith("| - |"), fp8  # no a16w8 row on the paged pair
    # Without the option the table is not printed.
    r = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
    assert r.returncode == 0 and "| recipe:" not in r.stdout, r.stdout
    print("bench-table --layout: pairs, best schedules, ratios and the 10 % mark as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
