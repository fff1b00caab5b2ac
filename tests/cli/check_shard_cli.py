#!/usr/bin/env python3
"""`--shard i/n` of gen, verify and bench, through the binary (issue 12 item 6).

gen: the shards of data/cases/small.txt together write exactly the files of one unsharded run, bit
for bit, each file by one shard; a shard with no case says so and writes nothing; --check-manifest
shares out the manifest's cases the same way. verify: the shards' rows cover the list's cases once
(on a machine without a GPU, verify checks the CPU side of each case, which is enough to see the
shares). bench: which cases its shard takes. All three refuse a malformed --shard with exit 2 and
the rule broken, before any work. (The shares themselves: tests/cli/shard_test.cpp.)

Usage: check_shard_cli.py MLACHECK_BINARY REPO_ROOT WORK_DIR
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args, cwd=None):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd)


def files(folder):
    folder = Path(folder)
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}


def main():
    binary, repo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    small = repo / "data" / "cases" / "small.txt"

    # Malformed values: exit 2 with the rule, for every command, before any work.
    refusals = {"0/0": "must be >= 1", "1/0": "must be >= 1", "3/2": "i must be in 1..2",
                "-1/2": "digits", "1/2x": "digits", "": "got nothing"}
    commands = {"gen": ["gen", "--case-list", small, "-o", work / "refused"],
                "verify": ["verify", "--case-list", small],
                "bench": ["bench", "--case-list", small]}
    for name, args in commands.items():
        for text, why in refusals.items():
            r = run(binary, *args, "--shard", text)
            check(r.returncode == 2 and why in r.stderr,
                  f"{name} --shard {text!r}: exit 2 saying '{why}' (got {r.returncode}: {r.stderr.strip()[:200]})")
        # "--shard=" is CLI11's own refusal of a missing value.
        r = run(binary, *args, "--shard=")
        check(r.returncode == 2 and "--shard" in r.stderr, f"{name} --shard=: exit 2 ({r.stderr.strip()[:200]})")
    r = run(binary, "gen", "--case-list", small, "-o", work / "refused", "--shard=-1/2")
    check(r.returncode == 2 and "digits" in r.stderr, f"gen --shard=-1/2: exit 2 ({r.stderr.strip()[:200]})")
    check(not (work / "refused").exists(), "a refused gen wrote nothing")
    r = run(binary, "gen", "--batch", 1, "--kv-len", 8, "--seed", 1, "-o", work / "one.safetensors", "--shard", "1/2")
    check(r.returncode == 2 and "one case has no shards" in r.stderr, f"gen of one case refuses --shard ({r.stderr.strip()[:200]})")

    # gen: the union of the shards' files is one unsharded run's, bit for bit, each file written once.
    r = run(binary, "gen", "--case-list", small, "-o", work / "all")
    check(r.returncode == 0, f"unsharded gen exit 0 ({r.stderr.strip()[:200]})")
    want = files(work / "all")
    check(len(want) == 4, f"unsharded gen wrote the 4 cases of small.txt (got {sorted(want)})")
    n = 3
    union = {}
    for i in range(1, n + 1):
        out = work / f"shard{i}of{n}"
        r = run(binary, "gen", "--case-list", small, "-o", out, "--shard", f"{i}/{n}")
        got = files(out)
        expected = len(range(i - 1, 4, n))  # case k to shard k mod n + 1
        check(r.returncode == 0 and f"shard {i}/{n}: {expected} of 4 cases" in r.stdout,
              f"gen --shard {i}/{n}: exit 0 and says '{expected} of 4 cases' ({r.stdout.strip()[:200]})")
        check(len(got) == expected, f"gen --shard {i}/{n} wrote {expected} files (got {sorted(got)})")
        check(not (set(got) & set(union)), f"gen --shard {i}/{n} wrote no file another shard wrote")
        union.update(got)
    check(set(union) == set(want), f"the {n} shards wrote the unsharded run's files ({sorted(union)})")
    check(all(union.get(k) == v for k, v in want.items()), f"each file of the {n} shards is bit-identical to the unsharded one")

    r = run(binary, "gen", "--case-list", small, "-o", work / "empty", "--shard", "5/5")
    check(r.returncode == 0 and "shard 5/5: no cases (only 4 for 5 shards)" in r.stdout,
          f"gen --shard 5/5 of 4 cases: exit 0, 'no cases' ({r.returncode}: {r.stdout.strip()[:200]})")
    check(not files(work / "empty"), "gen --shard 5/5 wrote nothing")

    # gen --check-manifest: the shards check each manifest case once.
    manifest = repo / "data" / "golden" / "manifest.json"
    names = [c["name"] for c in json.loads(manifest.read_text())["cases"]]
    checked = []
    for i in (1, 2):
        r = run(binary, "gen", "--check-manifest", manifest, "--shard", f"{i}/2")
        ok = re.findall(r"^(\S+)\s+ok: ", r.stdout, re.M)
        check(r.returncode == 0 and f"shard {i}/2: {len(ok)} of {len(names)} cases" in r.stdout,
              f"gen --check-manifest --shard {i}/2: exit 0, {len(ok)} checked ({r.stdout.strip()[-200:]})")
        checked += ok
    check(sorted(checked) == sorted(names), f"the 2 shards checked each manifest case once ({checked})")
    r = run(binary, "gen", "--check-manifest", manifest, "--cases", names[0], "--shard", "2/2")
    check(r.returncode == 0 and "shard 2/2: no cases (only 1 for 2 shards)" in r.stdout,
          f"gen --check-manifest with nothing for its shard: exit 0, 'no cases' ({r.returncode}: {r.stdout.strip()[-200:]})")

    # verify: the shards' rows cover small.txt's cases once (one strategy keeps it cheap).
    list_names = [re.search(r"name=(\S+)", line).group(1) for line in small.read_text().splitlines()
                  if line.strip() and not line.startswith("#")]
    strategy = "a16w16/split-k/portable"
    seen = []
    for i in (1, 2):
        report = work / f"verify{i}.json"
        r = run(binary, "verify", "--case-list", small, "--strategy", strategy, "--shard", f"{i}/2", "--json", report)
        check(r.returncode == 0 and re.search(rf"^shard {i}/2: \d of 4 cases", r.stdout, re.M),
              f"verify --shard {i}/2: exit 0 and the shard line ({r.returncode}: {r.stdout.strip()[:300]} {r.stderr.strip()[:200]})")
        j = json.loads(report.read_text()) if report.exists() else {}
        rows = {row["case"] for row in j.get("rows", [])}
        check(j.get("shard", {}).get("index") == i and j["shard"].get("count") == 2
              and j["shard"].get("cases") == len(rows) and j["shard"].get("of_cases") == 4,
              f"verify --shard {i}/2 --json records the shard ({j.get('shard')})")
        seen += sorted(rows)
    check(sorted(seen) == sorted(list_names), f"verify's 2 shards ran each case once ({seen})")
    r = run(binary, "verify", "--case-list", small, "--strategy", strategy, "--shard", "7/7")
    check(r.returncode == 0 and "shard 7/7: no cases (only 4 for 7 shards)" in r.stdout,
          f"verify --shard 7/7 of 4 cases: exit 0, 'no cases' ({r.returncode}: {r.stdout.strip()[:300]})")

    # bench: says which cases its shard takes (without a GPU it then measures nothing).
    r = run(binary, "bench", "--case-list", small, "--shard", "2/3")
    check(r.returncode == 0 and "shard 2/3: 1 of 4 cases" in r.stdout,
          f"bench --shard 2/3: exit 0, '1 of 4 cases' ({r.returncode}: {r.stdout.strip()[:300]})")
    r = run(binary, "bench", "--case-list", small, "--shard", "5/5")
    check(r.returncode == 0 and "shard 5/5: no cases" in r.stdout,
          f"bench --shard 5/5: exit 0, 'no cases' ({r.returncode}: {r.stdout.strip()[:300]})")

    # CTest's GPU assignment: a malformed value is an error before any command runs.
    r = subprocess.run([binary, "list"], capture_output=True, text=True,
                       env={"CTEST_RESOURCE_GROUP_0_GPUS": "id:gpu0,slots:1", "PATH": "/usr/bin:/bin"})
    check(r.returncode == 2 and "CTEST_RESOURCE_GROUP_0_GPUS" in r.stderr,
          f"a malformed CTEST_RESOURCE_GROUP_0_GPUS: exit 2 naming it ({r.returncode}: {r.stderr.strip()[:200]})")

    print(f"\n{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
