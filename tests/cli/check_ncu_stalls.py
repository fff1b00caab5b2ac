#!/usr/bin/env python3
"""scripts/ncu-stalls.py on a made-up SASS source page in ncu's CSV form: the ranking by stall samples,
the shares, the reasons, the context lines, and exit 2 on a file that is not such a page.

usage: check_ncu_stalls.py SCRIPT WORK_DIR
"""
import os
import subprocess
import sys

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
          "Instructions Executed", "stall_barrier", "stall_long_sb", "stall_wait", "stall_barrier (Not Issued)"]
# (address, instruction, samples, executed, barrier, long_sb, wait): 1400 samples in all, ncu's
# thousands separators in the largest.
ROWS = [("0x10", "LDC R1, c[0x0][0x28]", "0", "64", "0", "0", "0"),
        ("0x20", "BAR.SYNC.DEFER_BLOCKING R24, 0x100", "100", "64", "90", "0", "10"),
        ("0x30", "BSSY B0, 0x80", "1,000", "64", "1,000", "0", "0"),
        ("0x40", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R1+URZ], R2", "50", "1,024", "0", "0", "50"),
        ("0x50", "@!P0  BRA 0x90", "250", "1,024", "0", "240", "10")]


def write_page(path: str) -> None:
    def q(x):
        return '"' + str(x) + '"'
    with open(path, "w") as f:
        f.write('"Kernel Name","void made_up_kernel(int)",\n')
        f.write(",".join(q(h) for h in HEADER) + "\n")
        for a, src, samples, ran, bar, lsb, wait in ROWS:
            f.write(",".join(q(x) for x in (a, "      " + src, samples, samples, ran, bar, lsb, wait, bar)) + "\n")


def main() -> int:
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    page = os.path.join(work, "page.csv")
    write_page(page)
    r = subprocess.run([sys.executable, script, page, "--top", "3", "--context", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "5 instructions, 1400 stall samples", out[0]
    ranked = [line for line in out if line.strip().endswith("]") and "%" in line]
    assert len(ranked) == 3, r.stdout
    assert "71.4%" in ranked[0] and "0x30" in ranked[0] and "stall_barrier 1000" in ranked[0], ranked[0]
    assert "17.9%" in ranked[1] and "0x50" in ranked[1] and "1,024" in ranked[1] and ranked[1].index("stall_long_sb 240") < ranked[1].index(
        "stall_wait 10"), ranked[1]
    assert "7.1%" in ranked[2] and "0x20" in ranked[2], ranked[2]
    assert "(Not Issued)" not in r.stdout, "the not-issued columns are not reasons of their own"
    # The context of the first: the instruction before it (the barrier it waits behind), then itself.
    at = out.index("--- 0x30")
    assert "BAR.SYNC" in out[at + 1] and "BSSY" in out[at + 2], out[at:at + 3]

    not_a_page = os.path.join(work, "not_a_page.csv")
    with open(not_a_page, "w") as f:
        f.write('"Kernel Name","x"\n"ID","Metric Name","Metric Value"\n')
    r = subprocess.run([sys.executable, script, not_a_page], capture_output=True, text=True)
    assert r.returncode == 2 and "not the SASS source page" in r.stderr, (r.returncode, r.stderr)
    r = subprocess.run([sys.executable, script, os.path.join(work, "missing.csv")], capture_output=True, text=True)
    assert r.returncode == 2 and "cannot read" in r.stderr, (r.returncode, r.stderr)
    print("ncu-stalls: ranking, shares, reasons, context and refusals as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
