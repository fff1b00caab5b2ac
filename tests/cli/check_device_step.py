#!/usr/bin/env python3
"""The device scripts' step runner (scripts/device-step.sh) and scripts/device-ledger.sh's flow without
a GPU. The runner: a passing step leaves the status 0, a failing one sets it to 1, each step's exit
code lands in the summary and its output in its log, and a step with less than 20 s of the budget
left is skipped, saying so. The ledger, with a stand-in mlacheck, floor probe and nvidia-smi: every
step runs (its log in ledger.tgz), the bar's missing FlashInfer and FlashMLA fail that step only,
and the script's exit status says so; with no budget left every step is skipped, none run.
scripts/device-session.sh: the ledger on an H200, device-check.sh on another card, an unknown job
refused. device-check.sh runs racecheck after the other three sanitizers.

usage: check_device_step.py REPO WORK_DIR
"""
import os
import shutil
import subprocess
import sys
import tarfile

from cli_checks import Checks  # next to this file

repo, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
expect = Checks()

shutil.rmtree(work, ignore_errors=True)
os.makedirs(f"{work}/steps")

runner = subprocess.run(
    ["bash", "-c", f'''source "{repo}/scripts/device-step.sh"
step_budget=600 step_dir="{work}/steps" step_summary="{work}/steps/summary.txt" step_tail=0
step good 30 echo fine; echo "after good: $step_status"
step bad 30 false; echo "after bad: $step_status"
step_budget=$((SECONDS + 10)); step late 30 echo never'''],
    capture_output=True, text=True)
out = runner.stdout
expect("after good: 0" in out, "a passing step leaves the status 0")
expect("after bad: 1" in out, "a failing step sets the status to 1")
summary = open(f"{work}/steps/summary.txt").read()
expect("good: exit 0" in summary and "bad: exit 1" in summary, "each step's exit code is in the summary")
expect(open(f"{work}/steps/good.log").read() == "fine\n", "a step's output is in its log")
expect("late: skipped" in summary and not os.path.exists(f"{work}/steps/late.log"),
       "a step with less than 20 s left is skipped, saying so, and not run")

# The ledger with stand-ins: mlacheck and the floor probe log their arguments and succeed;
# nvidia-smi names a GPU.
build = f"{work}/build"
os.makedirs(f"{build}/cli")
os.makedirs(f"{build}/probes")
os.makedirs(f"{work}/bin")
with open(f"{build}/cli/mlacheck", "w") as f:
    f.write('#!/bin/sh\necho "mlacheck $*"\n')
with open(f"{build}/probes/decode_floor", "w") as f:
    f.write('#!/bin/sh\necho "decode_floor $*"\n')
with open(f"{work}/bin/nvidia-smi", "w") as f:
    f.write('#!/bin/sh\necho "Stand-in H200, 1980 MHz, 143771 MiB"\n')
for tool in (f"{build}/cli/mlacheck", f"{build}/probes/decode_floor", f"{work}/bin/nvidia-smi"):
    os.chmod(tool, 0o755)
env = dict(os.environ, PATH=f"{work}/bin:" + os.environ["PATH"], OUT=f"{work}/ledger")
ledger = subprocess.run([f"{repo}/scripts/device-ledger.sh", build, f"{work}/no-fi", f"{work}/no-fmla"],
                        capture_output=True, text=True, env=env, cwd=repo)
expect(ledger.returncode == 1, f"the ledger's status is 1 when its bar step fails (got {ledger.returncode})")
summary = open(f"{work}/ledger/summary.txt").read()
steps = ["verify-quick", "fused-test", "merge-1", "bar", "persist", "splits", "floor", "merge-2"]
expect(all(f"{s}: exit" in summary for s in steps), "every ledger step ran")
expect("bar: exit 1" in summary and summary.count("exit 0") == len(steps) - 1,
       "only the bar (no FlashInfer, no FlashMLA, no GPU) failed")
with tarfile.open(f"{work}/ledger/ledger.tgz") as archive:
    names = {os.path.basename(n) for n in archive.getnames()}
    merge = archive.extractfile("./merge-1.log").read().decode()
expect(all(f"{s}.log" in names for s in steps), "ledger.tgz holds every step's log")
expect("--merge rule,cluster" in merge and "a8w8-static/split-k/hopper" in merge,
       "the merge rows time both merges of the split-K strategies")
expect(sorted(os.listdir(f"{work}/ledger")) == ["ledger.tgz", "summary.txt"],
       "the ledger hands back two files")

env["LEDGER_BUDGET_S"] = "0"
env["OUT"] = f"{work}/ledger-none"
ledger = subprocess.run([f"{repo}/scripts/device-ledger.sh", build], capture_output=True, text=True, env=env, cwd=repo)
summary = open(f"{work}/ledger-none/summary.txt").read()
expect(ledger.returncode == 0 and summary.count("skipped") == len(steps),
       "with no budget every step is skipped and none fails")

# scripts/device-session.sh picks the job by the card: the ledger on an H200 (the stand-in
# nvidia-smi above), device-check.sh elsewhere; with no budget every step is skipped.
env["DEVICE_SESSION_BUDGET_S"] = "0"
env["OUT"] = f"{work}/session-h200"
session = subprocess.run([f"{repo}/scripts/device-session.sh", build], capture_output=True, text=True, env=env,
                         cwd=repo)
expect(session.returncode == 0 and "the ledger job" in session.stdout, "on an H200 the session runs the ledger")
expect(sorted(os.listdir(f"{work}/session-h200")) == ["ledger.tgz", "summary.txt"],
       "the ledger's two files come back from the session")
os.makedirs(f"{work}/bin-h100")
with open(f"{work}/bin-h100/nvidia-smi", "w") as f:
    f.write('#!/bin/sh\necho "NVIDIA H100 80GB HBM3"\n')
os.chmod(f"{work}/bin-h100/nvidia-smi", 0o755)
h100 = dict(env, PATH=f"{work}/bin-h100:" + os.environ["PATH"], OUT=f"{work}/session-h100")
session = subprocess.run([f"{repo}/scripts/device-session.sh", build], capture_output=True, text=True, env=h100,
                         cwd=repo)
summary = open(f"{work}/session-h100/summary.txt").read()
expect("the check job" in session.stdout and "selftest: skipped" in summary and "verify: skipped" in summary,
       "on another card the session runs device-check.sh")
expect(sorted(os.listdir(f"{work}/session-h100")) == ["all.tgz", "summary.txt"],
       "device-check.sh's logs come back packed beside its summary")
# device-check.sh runs racecheck, the slowest sanitizer by far, after the other three, so that a short
# budget cuts racecheck's tail and not synccheck and initcheck whole.
with open(f"{work}/bin-h100/compute-sanitizer", "w") as f:
    f.write(f'#!/bin/sh\necho "$2 $3" >> "{work}/sanitizers.txt"\necho "========= ERROR SUMMARY: 0 errors"\n')
os.chmod(f"{work}/bin-h100/compute-sanitizer", 0o755)
check = subprocess.run([f"{repo}/scripts/device-check.sh", build], capture_output=True, text=True, cwd=repo,
                       env=dict(h100, OUT=f"{work}/check", MLACHECK_DEVICE_BUDGET_S="300", MLACHECK_DEVICE_BENCH="0",
                                MLACHECK_DEVICE_DRIFT="0", MLACHECK_DEVICE_RAGGED="0", MLACHECK_DEVICE_EXAMPLE="0"))
order = [line.split()[0] for line in open(f"{work}/sanitizers.txt")]
expect(order == ["memcheck", "synccheck", "initcheck", "racecheck"],
       f"the sanitizers run memcheck, synccheck, initcheck, then racecheck (got {order})")
expect("racecheck --error-exitcode" in open(f"{work}/sanitizers.txt").read() and check.returncode == 0,
       f"each ran and passed (exit {check.returncode})")
bogus = subprocess.run([f"{repo}/scripts/device-session.sh", build], capture_output=True, text=True,
                       env=dict(env, DEVICE_SESSION_JOB="bench"), cwd=repo)
expect(bogus.returncode == 2 and "not auto, ledger or check" in bogus.stderr, "an unknown job is refused, saying so")

if expect.failures:
    raise SystemExit(f"{expect.failures} check(s) failed")
print("all checks passed")
