#!/usr/bin/env python3
"""scripts/device-ab.sh with two made-up builds (a stub `cli/mlacheck` each that writes bench JSON of
its own median, passes or fails its checks, or hangs): the table from both sides' alternated runs,
OUT holding ab.txt and all.tgz alone (what the device tool's 8 returned files allow), exit 1 and a
FAIL or exit line for a failed check, and all.tgz packed also when a timeout ends the script.

usage: check_device_ab.py SCRIPT WORK_DIR
"""
import os
import shutil
import subprocess
import sys
import tarfile
import time

STUB = r"""#!/usr/bin/env python3
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
conf = dict(line.split("=", 1) for line in open(os.path.join(here, "stub.conf")).read().split())
args = sys.argv[1:]
value = lambda flag: args[args.index(flag) + 1] if flag in args else None
if args[0] == "bench":
    if conf.get("hang") == "1":
        open(os.path.join(here, "hung.pid"), "w").write(str(os.getpid()))
        print("bench: started", flush=True)
        time.sleep(60)
    rows = [{"strategy": s, "case": c, "median_us": float(conf["median"]), "p10_us": 0, "p90_us": 0}
            for s in value("--strategy").split(",") for c in value("--case").split(",")]
    json.dump({"rows": rows}, open(value("--json"), "w"))
elif args[0] == "selftest":
    print("[  PASSED  ] 3 tests.")
elif args[0] == "verify":
    bad = conf.get("verify_fails") == "1"
    print("%d passed, %d failed, 0 unsupported" % (3 if bad else 4, 1 if bad else 0))
    sys.exit(1 if bad else 0)
"""


def make_build(root, name, **conf):
    cli = os.path.join(root, name, "cli")
    os.makedirs(cli, exist_ok=True)
    stub = os.path.join(cli, "mlacheck")
    with open(stub, "w") as f:
        f.write(STUB)
    os.chmod(stub, 0o755)
    with open(os.path.join(cli, "stub.conf"), "w") as f:
        f.write("\n".join(f"{k}={v}" for k, v in conf.items()) + "\n")
    with open(os.path.join(root, name, "commit.txt"), "w") as f:
        f.write(name + "\n")
    return os.path.join(root, name)


def run(script, old, new, out, timeout=None, **env):
    e = dict(os.environ, OUT=out, AB_SPLITK_STRATEGIES="s/split-k/x", AB_SPLITK_CASES="c1,c2",
             AB_LAYOUT_STRATEGIES="", AB_CHECK_STRATEGIES="s/*", PATH="/usr/bin:/bin", **env)
    cmd = ["bash", script, old, new]
    if timeout is not None:
        cmd = ["timeout", str(timeout)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=e)


def archived(out):
    with tarfile.open(os.path.join(out, "all.tgz")) as t:
        return sorted(os.path.basename(n) for n in t.getnames() if n not in (".", "./"))


def gone(pid, seconds=5.0):
    """Whether process pid has ended (within seconds: a killed process takes a moment to be reaped)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # a zombie has ended
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def main() -> int:
    script, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    old = make_build(work, "old", median="10.0")
    new = make_build(work, "new", median="9.0")
    bad = make_build(work, "bad", median="9.0", verify_fails="1")
    hung = make_build(work, "hung", median="9.0", hang="1")

    out = os.path.join(work, "out-good")
    r = run(script, old, new, out)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert sorted(os.listdir(out)) == ["ab.txt", "all.tgz"], os.listdir(out)
    report = open(os.path.join(out, "ab.txt")).read()
    assert "| s/split-k/x | c1 | 10.0 / 10.0 | 9.0 / 9.0 | 0.900 |" in report, report
    assert "median new/old 0.900 (0.900-0.900) over 2 rows" in report, report
    assert "selftest: exit 0; [  PASSED  ] 3 tests." in report, report
    assert "verify: exit 0; 4 passed, 0 failed" in report, report
    assert "FAIL" not in report, report
    names = archived(out)
    for n in ["ab.txt", "splitk-old-1.json", "splitk-new-2.json", "splitk-old-2.log", "verify.log", "verify-ragged.log"]:
        assert n in names, (n, names)

    # A failed check: exit 1, its line says so, the table is still there.
    out = os.path.join(work, "out-bad")
    r = run(script, old, bad, out)
    report = open(os.path.join(out, "ab.txt")).read()
    assert r.returncode == 1, (r.returncode, report)
    assert "verify: exit 1; 3 passed, 1 failed" in report, report
    assert "0.900" in report, report

    # A bench that hangs (60 s), the script ended by a timeout after 3: it ends then, not when the
    # step would, with the step killed, and OUT still gets ab.txt and all.tgz with the logs so far.
    out = os.path.join(work, "out-hung")
    start = time.monotonic()
    r = run(script, old, hung, out, timeout=3)
    took = time.monotonic() - start
    assert r.returncode == 124, (r.returncode, r.stdout, r.stderr)
    assert took < 30, f"the script outlived its timeout by waiting for its step: {took:.1f} s"
    pid = int(open(os.path.join(hung, "cli", "hung.pid")).read())
    assert gone(pid), f"the hung step (pid {pid}) still runs"
    assert sorted(os.listdir(out)) == ["ab.txt", "all.tgz"], os.listdir(out)
    names = archived(out)
    assert "splitk-old-1.json" in names and "splitk-new-1.log" in names, names

    # A build without a binary: exit 2 before anything runs.
    r = run(script, old, os.path.join(work, "nothing"), os.path.join(work, "out-none"))
    assert r.returncode == 2 and "no binary" in r.stderr, (r.returncode, r.stderr)
    print("device-ab: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
